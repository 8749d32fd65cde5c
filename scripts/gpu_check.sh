#!/usr/bin/env bash
# The check of the cuda backend on a machine with an NVIDIA GPU and no network: builds and
# installs the package from this tree with the native tests, runs the native tests, the
# cuda-marked Python tests, the whole Python suite with ZEHAL_BACKEND=cuda, and the
# benchmarks (zehal bench, which includes the cuda suite beside the raw driver API and
# CuPy). Logs go to $OUT (default: ./gpu_check_logs); the last lines printed are a summary.
# --ze-driver runs only the Level Zero driver's tests and benchmark (Debian's libze1 and
# libze-dev unpacked, LD_LIBRARY_PATH and ZEHAL_LEVEL_ZERO_INCLUDE_DIR pointing at them).
#   bash scripts/gpu_check.sh [--bench-only | --tests-only | --ze-driver]
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu_check_logs}
mkdir -p "$OUT"
JOBS=${JOBS:-$(nproc)}
mode=${1:-all}
status=()

step() {  # step <name> <log> <seconds> <command...>: runs it (at most that long), records pass/fail
  local name=$1 log=$2 limit=$3; shift 3
  local t0=$SECONDS
  if timeout "$limit" "$@" >"$OUT/$log" 2>&1; then
    status+=("PASS $name ($((SECONDS - t0)) s)")
  else
    status+=("FAIL $name ($((SECONDS - t0)) s, see $log)")
  fi
  tail -n 3 "$OUT/$log"
}

{
  nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
  python3 -c 'import cupy; print("cupy", cupy.__version__)' 2>&1
  python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())' 2>&1
} >"$OUT/env.log" 2>&1
cat "$OUT/env.log"

export CMAKE_BUILD_PARALLEL_LEVEL=$JOBS
step build build.log 300 python3 -m pip install -v --no-build-isolation --no-deps --no-index \
  -Ccmake.define.ZEHAL_BUILD_TESTS=ON -Ccmake.define.ZEHAL_WERROR="${ZEHAL_WERROR:-OFF}" .
python3 -m zehal info >>"$OUT/env.log" 2>&1 || true

# Each step is bounded, so that a hang still leaves the logs and the summary.
driver=build/python/cpp/ze_driver/libze_zehal.so
if [ -f "$driver" ] && [ "$mode" != --tests-only ]; then
  for backend in cuda sim; do
    step "ze-driver-bench-$backend" "ze_driver_bench_$backend.log" 120 \
      env ZE_ENABLE_ALT_DRIVERS="$PWD/$driver" build/python/bench/ze_driver_bench "$backend"
  done
  # The level_zero backend beside raw Level Zero calls, both over the driver's first
  # device (the GPU): what an Intel GPU user's copies cost through zehal, with the driver
  # swapped.
  step level-zero-bench level_zero_bench.log 120 \
    env ZE_ENABLE_ALT_DRIVERS="$PWD/$driver" build/python/bench/level_zero_bench
fi
if [ "$mode" = --ze-driver ]; then
  step ze-driver-tests ze_driver_ctest.log 240 ctest --test-dir build/python -L ze_driver --output-on-failure -j "$JOBS"
  step pytest-ze-driver pytest_ze_driver.log 120 python3 -m pytest -q -p no:cacheprovider tests/py/test_ze_driver.py
elif [ "$mode" != --tests-only ]; then
  step bench bench.log 240 env ZEHAL_BACKEND=cuda python3 -m zehal bench --json "$OUT/bench.json"
  # The Python round trip against CuPy, twice more (three separate runs in all).
  step bench-python bench_python.log 120 sh -c 'for i in 1 2; do ZEHAL_BACKEND=cuda python3 -m zehal bench --suite python; done'
fi
if [ "$mode" != --bench-only ] && [ "$mode" != --ze-driver ]; then
  step pytest-cuda pytest.log 240 env ZEHAL_BACKEND=cuda python3 -m pytest -m cuda -q -p no:cacheprovider tests/py
  step native-tests ctest.log 240 ctest --test-dir build/python --output-on-failure -j "$JOBS" --timeout 120
  step pytest-all-on-cuda pytest_all.log 240 env ZEHAL_BACKEND=cuda python3 -m pytest -q -p no:cacheprovider tests/py
fi

grep -hE "^(FAILED|ERROR)|tests? failed|[0-9]+ (passed|failed)" "$OUT"/ctest.log "$OUT"/pytest*.log 2>/dev/null | tail -n 40
echo "--- Level Zero driver, level_zero backend ---"
cat "$OUT"/ze_driver_bench_*.log "$OUT"/level_zero_bench.log 2>/dev/null
echo "--- cuda suite ---"
grep -E "^cuda|^python|cuda suite|memcpyAsync|CUPTI|cuMem" "$OUT/bench.log" 2>/dev/null
echo "--- summary ---"
printf '%s\n' "${status[@]}"
for s in "${status[@]}"; do [[ $s == FAIL* ]] && exit 1; done
exit 0
