#!/usr/bin/env bash
# The native tests again under AddressSanitizer + UndefinedBehaviorSanitizer, and the
# threaded ones under ThreadSanitizer. The AddressSanitizer build includes the Python
# extension, so that scripts/sanitize_python.sh, which runs next in CI, builds nothing again.
# Both build at -O1 with line tables only (-g1): reports name files and lines, and the
# builds take far less than unoptimised ones with full debug information.
set -euo pipefail
cd "$(dirname "$0")/.."

run() {  # run <build dir> <sanitizers> <python ON|OFF> <build target> [ctest args...]
  local dir=$1 san=$2 python=$3 target=$4; shift 4
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DZEHAL_SANITIZE="$san" \
    -DZEHAL_BUILD_PYTHON="$python" -DZEHAL_BUILD_BENCHMARKS=OFF -DZEHAL_WERROR=ON -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
  cmake --build "$dir" -j2 --target "$target"
  ctest --test-dir "$dir" --output-on-failure -j2 --timeout 600 "$@"
}

ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  run build/asan address,undefined ON all -LE build
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 run build/tsan thread OFF zehal_threaded_tests -L threaded
