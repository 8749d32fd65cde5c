// Kernel signatures read from a translated module: the OpenCL kernel argument metadata,
// reqd_work_group_size, and estimates of private and static local memory; and the
// module's program-scope variables.
#pragma once

#include <llvm/IR/Module.h>

#include <vector>

#include "compiler/program.hpp"

namespace zehal::compiler {

// OpenCL address spaces as the SPIR target numbers them.
inline constexpr unsigned kGlobalSpace = 1;
inline constexpr unsigned kConstantSpace = 2;
inline constexpr unsigned kLocalSpace = 3;

// The kernels of `module` (spir_kernel functions) in the order the module holds them.
std::vector<KernelInfo> read_kernels(const llvm::Module& module);

// The program-scope variables `module` exports (defined, externally visible, in the
// global or constant space), in the order it holds them, their sizes by its data layout.
std::vector<GlobalInfo> read_globals(const llvm::Module& module);

// The kernel functions of `module`, in the same order as read_kernels().
std::vector<llvm::Function*> kernel_functions(llvm::Module& module);

}  // namespace zehal::compiler
