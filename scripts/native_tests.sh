#!/usr/bin/env bash
# The native tests (CTest), built with AddressSanitizer + UndefinedBehaviorSanitizer,
# unoptimised, with line tables only (-g1: reports name files and lines; half the build time
# of -O1, and less than full debug information). The build includes the Python extension,
# so that scripts/sanitize_python.sh builds nothing again.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build/asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" -DZEHAL_SANITIZE=address,undefined -DZEHAL_BUILD_PYTHON=ON \
  -DZEHAL_BUILD_BENCHMARKS=OFF -DZEHAL_WERROR=ON -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build build/asan -j2
# The build-labelled tests (exported symbol lists, a build as a subproject) describe an
# unsanitized build: the sanitizer runtimes change the symbol tables.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build/asan --output-on-failure -j2 --timeout 600 -LE build
