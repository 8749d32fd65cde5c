#!/usr/bin/env bash
# The Python suite against an AddressSanitizer + UndefinedBehaviorSanitizer build of the
# extension, then a bounded fuzz run of the decoder, layouts and the Python API's argument
# parsers against the same build.
#   bash scripts/sanitize_python.sh [fuzz seconds, default 60]
# The interpreter is not instrumented, so the sanitizer runtime is preloaded (LD_PRELOAD);
# leak checking is off (CPython keeps memory until exit by design). ThreadSanitizer is not
# run on the Python suite: it must be the first library of the process and sees every
# access of the uninstrumented interpreter as a race; the threaded native tests run under it.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzz_seconds=${1:-60}
# The build of scripts/sanitize.sh (the same options), whose targets are then up to date.
build=build/asan

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O0 -g1" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O0 -g1" -DZEHAL_SANITIZE=address,undefined \
  -DZEHAL_BUILD_PYTHON=ON -DZEHAL_BUILD_BENCHMARKS=OFF -DZEHAL_WERROR=ON -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
cmake --build "$build" -j2 --target _zehal ze_zehal zehal

# A package folder: the sources of python/zehal beside the sanitized extension, the
# sanitized Level Zero driver and C API library, where the wheel puts it (zehal.ze_driver_path()).
site="$build/site"
rm -rf "$site" && mkdir -p "$site/zehal/lib"
cp python/zehal/*.py python/zehal/*.pyi python/zehal/py.typed "$site/zehal/"
cp "$build"/cpp/python/_zehal*.so "$site/zehal/"
cp "$build"/cpp/ze_driver/libze_zehal.so "$site/zehal/lib/"
cp -L "$build"/libzehal.so "$site/zehal/lib/"  # the C API library, as the wheel places it

export PYTHONPATH="$PWD/$site"
export LD_PRELOAD="$(gcc -print-file-name=libasan.so):$(gcc -print-file-name=libubsan.so)"
export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1:detect_odr_violation=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# test_package checks the installed wheel's layout, which this folder is not.
# The traces across MPI ranks start interpreters under mpiexec, which the preloaded runtime
# would follow into every rank: they run in the test command only.
python3 -m pytest -q -p no:cacheprovider tests/py --ignore=tests/py/test_package.py --ignore=tests/py/test_trace_mpi.py
python3 tests/fuzz/fuzz_python_api.py --seconds "$fuzz_seconds"
