// OpenCL's printf on NVPTX: CUDA's device printf, vprintf(format, arguments), which the
// CUDA driver provides to every module and whose output the host sees at synchronisation.
#pragma once

#include <llvm/IR/Module.h>

#include <string>

#include "zehal/ze_result.h"

namespace zehal::compiler {

// Name of CUDA's device printf: a declaration the NVPTX module may keep unresolved.
inline constexpr const char* kVprintf = "vprintf";

// Rewrites every call of `module`'s printf (a module remapped to NVPTX's address spaces)
// as a call of vprintf with the arguments stored in a buffer of the calling function,
// each at its natural alignment (CUDA's layout); floats become doubles and small integers
// ints, as C's variadic calls do, pointers become generic. MODULE_BUILD_FAILURE with the
// reason in `log` for arguments vprintf cannot take (OpenCL's vector formats).
ze_result_t lower_printf(llvm::Module& module, std::string* log);

}  // namespace zehal::compiler
