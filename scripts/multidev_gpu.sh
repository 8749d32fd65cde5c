#!/usr/bin/env bash
# The checks of several devices on a machine with two or more CUDA GPUs (docs/devices.md),
# from the repository root after a build: the CUDA peer tests of the HAL, the Level Zero
# driver's peer tests over the CUDA devices, the Python tests of several devices (cuda
# marked), level-zero-tests' ze_peer through the driver (when built: /tmp/l0cts, see
# ../shared/tools/l0cts/README.md), and the peer-copy benchmark beside cuMemcpyPeerAsync.
# Every step runs; the exit status is 1 when one failed. BUILD names the build directory.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUILD:-build/dev}
L0CTS=${L0CTS:-/tmp/l0cts}
status=0
step() {
  echo "== $*"
  "$@" || { echo "!! failed: $*"; status=1; }
}

step nvidia-smi topo -m
step ctest --test-dir "$B" -R 'CudaPeer\.' --output-on-failure
driver=$(find "$B" -name 'libze_zehal.so' -print -quit)
peer_test=$(find "$B" -name 'ze_driver_peer_test' -type f -print -quit)
if [ -n "$driver" ] && [ -n "$peer_test" ]; then
  # The driver lists the CUDA devices first: the peer tests run between the first two GPUs.
  step env ZE_ENABLE_ALT_DRIVERS="$(realpath "$driver")" "$peer_test"
fi
# The package folder of the build (the installed package, where gpu_check.sh installed one,
# is used when the build has no Python module).
site=$PWD/$B/site
if ls "$B"/cpp/python/_zehal*.so >/dev/null 2>&1; then
  rm -rf "$site" && mkdir -p "$site/zehal/lib"
  cp python/zehal/*.py python/zehal/*.pyi python/zehal/py.typed "$site/zehal/"
  cp "$B"/cpp/python/_zehal*.so "$site/zehal/"
  cp "$B"/cpp/ze_driver/libze_zehal.so "$site/zehal/lib/"
fi
step env PYTHONPATH="$site" python3 -m pytest -q -m cuda tests/py/test_devices.py tests/py/test_error_messages.py \
  tests/py/test_host_memory.py
if [ -x "$L0CTS/build/cts/perf_tests/ze_peer/ze_peer" ] && [ -n "$driver" ]; then
  # Only the CUDA devices (no sim device): ze_peer measures every pair it is given.
  for args in "-t transfer_bw -o write" "-t transfer_bw -o read" "-t transfer_bw -b" "-t latency"; do
    # shellcheck disable=SC2086
    step env ZE_ENABLE_ALT_DRIVERS="$(realpath "$driver")" LD_LIBRARY_PATH="$L0CTS/install/lib" \
      ZEHAL_SIM_COMPUTE_ENGINES=0 timeout 600 "$L0CTS/build/cts/perf_tests/ze_peer/ze_peer" $args -s 0 -d 1
  done
fi
step env PYTHONPATH="$site" ZEHAL_BACKEND=cuda python3 -m zehal bench --suite peer --json peer_bench.json
exit $status
