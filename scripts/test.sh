#!/usr/bin/env bash
# The test command: builds zehal with its native tests, installs the Python package,
# then runs the native tests (CTest) and the Python tests (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/setup.sh
python3 -m pip install -q --disable-pip-version-check --no-build-isolation \
  -Ccmake.define.ZEHAL_BUILD_TESTS=ON -Ccmake.define.ZEHAL_WERROR="${ZEHAL_WERROR:-OFF}" ".[test]"
ctest --test-dir build/python --output-on-failure -j2 --timeout 300
python3 -m pytest -q tests/py
