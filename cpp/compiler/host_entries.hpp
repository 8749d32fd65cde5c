// The host entries of a lowered module: per kernel, a function of (argument slots,
// work-item context) that runs a whole group as a work-item loop, or one work-item when
// the kernel has barriers; and the table "zehal.module" that lists them
// (work_item_context.hpp).
#pragma once

#include <llvm/IR/Module.h>

#include <cstdint>
#include <vector>

namespace zehal::compiler {

// Adds the entries of `kernels` (functions whose last parameter is the context) and the
// table. `per_work_item[i]`: kernel i has barriers.
void add_entries(llvm::Module& module, const std::vector<llvm::Function*>& kernels,
                 const std::vector<bool>& per_work_item, uint64_t local_bytes);

}  // namespace zehal::compiler
