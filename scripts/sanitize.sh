#!/usr/bin/env bash
# The threaded native tests again under ThreadSanitizer (the native tests run under
# AddressSanitizer + UndefinedBehaviorSanitizer in the test command, scripts/native_tests.sh).
# Built without the kernel compiler, to keep this build short on CI's two cores: the
# compiler's threads (its work pool, kernels with barriers) run under AddressSanitizer in the
# test command.
set -euo pipefail
cd "$(dirname "$0")/.."

cmake -S . -B build/tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" -DZEHAL_SANITIZE=thread -DZEHAL_BUILD_PYTHON=OFF \
  -DZEHAL_BUILD_BENCHMARKS=OFF -DZEHAL_COMPILER=OFF -DZEHAL_WERROR=ON >/dev/null
cmake --build build/tsan -j2 --target zehal_threaded_tests
TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
  ctest --test-dir build/tsan --output-on-failure -j2 --timeout 600 -L threaded
