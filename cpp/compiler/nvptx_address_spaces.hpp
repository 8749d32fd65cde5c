// SPIR's address spaces rewritten as NVPTX's in a translated module, before NVPTX code
// generation, and the OpenCL builtins that depend on them (to_global and its kin, libclc's
// names for pointer arguments).
//
// SPIR and NVPTX number their spaces differently: SPIR's generic space (4) is NVPTX's
// constant bank, SPIR's constant space (2) has no NVPTX meaning, and NVPTX's generic
// space is 0, SPIR's private one.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

#include "zehal/ze_result.h"

namespace zehal::compiler {

// NVPTX's address space for a SPIR one: private (0) and generic (4) become generic (0),
// since NVPTX reaches private memory through generic pointers; global (1) and constant (2)
// become global (1): a __constant argument is a device buffer like any other, and a
// module-scope __constant variable is read-only global memory; local (3) is shared (3).
unsigned nvptx_address_space(unsigned spir_space);

// Rewrites every pointer type of `module` (in globals, functions, arguments, instructions,
// constants, struct types, type attributes and metadata) from SPIR's numbering to NVPTX's.
// Globals and functions are made again with the new types under the old names; casts
// between two SPIR spaces that NVPTX makes one (private and generic) disappear; intrinsics
// are declared again under their new mangled names. Debug information is dropped (the
// PTX is made without it). The module must use opaque pointers (parse_bitcode reads it
// so); MODULE_BUILD_FAILURE with the reason in `log` otherwise, or for global aliases.
ze_result_t remap_to_nvptx_address_spaces(llvm::Module& module, std::string* log);

// Gives bodies to the declarations of OpenCL 2.0's to_global, to_local and to_private
// (__to_global... as the translator names them) in a module remapped by
// remap_to_nvptx_address_spaces: the pointer in that space when it points there
// (PTX isspacep), else null. Returns whether it defined `builtin`.
bool define_generic_cast(llvm::Function& builtin);

// Renames the OpenCL builtins `module` declares (mangled names such as
// _Z6vload4mPU3AS2Kf) to the names libclc gives them on NVPTX: libclc's unqualified
// pointers are NVPTX generic ones, so a generic pointer (U3AS4) loses its qualifier, and
// a constant one (U3AS2), which points to global memory here, becomes global (U3AS1).
void rename_builtins_for_libclc(llvm::Module& module);

}  // namespace zehal::compiler
