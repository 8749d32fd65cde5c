#!/usr/bin/env bash
# The test command: installs the Python package, builds the native tests with
# AddressSanitizer + UndefinedBehaviorSanitizer and runs them (CTest, scripts/native_tests.sh),
# runs the Python suite and a bounded fuzz run against that sanitized build
# (scripts/sanitize_python.sh), then against the installed package what the sanitized run
# leaves out (the installed layout, the traces across MPI ranks), the Python suite again on
# the level_zero backend through zehal's own Level Zero driver, and the stubs check. CI then
# runs the threaded native tests under ThreadSanitizer (scripts/sanitize.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
python3 -m pip install -q --disable-pip-version-check --no-build-isolation \
  -Ccmake.define.ZEHAL_BUILD_BENCHMARKS=OFF -Ccmake.define.ZEHAL_WERROR="${ZEHAL_WERROR:-OFF}" ".[test]"
bash scripts/native_tests.sh
bash scripts/sanitize_python.sh 30
python3 -m pytest -q tests/py/test_package.py tests/py/test_trace_mpi.py
# The Python suite once more with the level_zero backend as the default: the real loader
# (Debian's libze1) against zehal's own Level Zero driver (docs/level_zero.md); the tests
# on the `device` fixture run on its level_zero device too.
# (The traces across MPI ranks run once, above: their ranks use the sim device whatever the
# default backend is.)
ZE_ENABLE_ALT_DRIVERS="$(python3 -m zehal --ze-driver)" ZEHAL_BACKEND=level_zero python3 -m pytest -q tests/py \
  --ignore=tests/py/test_trace_mpi.py
# The stubs (python/zehal/_zehal.pyi) against the module as built.
python3 -m mypy.stubtest zehal._zehal --allowlist python/stubtest_allowlist.txt
