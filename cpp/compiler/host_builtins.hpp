// OpenCL builtins for the host, defined in the module itself (so that the optimiser
// inlines them): atomics as LLVM atomic instructions (of integers, and of half, float and
// double for cl_ext_float_atomics), math and integer functions as LLVM
// intrinsics or the C library's functions, vload/vstore as vector loads and stores.
// Names are the OpenCL C mangled names the translator emits (_Z3sinf, _Z10atomic_addPU3AS1Vii...).
#pragma once

#include <llvm/IR/Function.h>

namespace zehal::compiler {

// Gives the declaration `builtin` a body when it is a builtin this file knows; false when
// it does not (the declaration stays, and the JIT names it if the kernel calls it).
bool define_builtin(llvm::Function& builtin);

// As define_builtin, for the atomics only (atomic_* and atom_*, 32- and 64-bit integers,
// half, float and double): their bodies are plain LLVM atomic instructions or
// compare-and-swap loops, right for every target (libclc lacks some of them for NVPTX).
bool define_atomic_builtin(llvm::Function& builtin);

}  // namespace zehal::compiler
