#!/usr/bin/env bash
# Fails when a C/C++ or Python file of the checked directories is not formatted as
# .clang-format and pyproject.toml's [tool.ruff] say, or when ruff's lint finds a problem.
# With --fix, formats those files in place instead (lint findings are left to fix by hand).
# Needs clang-format 14 (Debian's clang-format) and ruff, both installed by scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

# The directories checked.
DIRS=(cpp include bench examples python tests)

# *.inc files are excluded: they are macro tables whose indentation shows their structure.
mapfile -t sources < <(git ls-files -- "${DIRS[@]}" | grep -E '\.(c|h|cpp|hpp|cc|cu|cuh)$' || true)

if [ "${1:-}" = "--fix" ]; then
    [ ${#sources[@]} -eq 0 ] || clang-format -i "${sources[@]}"
    python3 -m ruff format "${DIRS[@]}"
    exit 0
fi

status=0
if [ ${#sources[@]} -gt 0 ] && ! clang-format --dry-run -Werror "${sources[@]}"; then
    status=1
fi
python3 -m ruff format --check "${DIRS[@]}" || status=1
python3 -m ruff check "${DIRS[@]}" || status=1
if [ $status -ne 0 ]; then
    echo "check_format: unformatted files or lint findings; 'bash scripts/check_format.sh --fix' formats" >&2
fi
exit $status
