// The host entries of a lowered module: per kernel, a function of (argument slots,
// work-item context) that runs a whole group as a work-item loop, or, when the kernel has
// barriers, that makes one work-item's coroutine (work_item_coroutine.hpp); and the table
// "zehal.module" that lists them (work_item_context.hpp).
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <string>
#include <vector>

#include "zehal/ze_result.h"

namespace zehal::compiler {

// Adds the entries of `kernels` (functions whose last parameter is the context) and the
// table. `per_work_item[i]`: kernel i calls `barrier`. MODULE_BUILD_FAILURE with `log`
// when a kernel's barriers cannot be made suspend points (make_work_item_coroutine).
ze_result_t add_entries(llvm::Module& module, const std::vector<llvm::Function*>& kernels,
                        const std::vector<bool>& per_work_item, uint64_t local_bytes, llvm::Function* barrier,
                        std::string* log);

}  // namespace zehal::compiler
