// The translated module made ready for the host's code generator: a work-item context
// parameter threaded through every function, the OpenCL work-item functions, barriers and
// static __local variables rewritten over it, the other builtins defined
// (host_builtins.hpp), an entry per kernel and the table "zehal.module"
// (work_item_context.hpp).
#pragma once

#include <llvm/IR/Module.h>

#include <string>

#include "zehal/ze_result.h"

namespace zehal::compiler {

// Lowers `module` in place for the host whose data layout and triple it gets.
// MODULE_BUILD_FAILURE with `log` for what the host cannot run (images, unknown calls
// are left to the JIT's symbol lookup, which names them).
ze_result_t lower_for_host(llvm::Module& module, const llvm::DataLayout& layout, const std::string& triple,
                           std::string* log);

}  // namespace zehal::compiler
