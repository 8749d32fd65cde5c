// Running a lowered kernel's groups on the pool: per group the argument slots, the
// group's __local memory (static variables, then the __local arguments), the work-item
// context, and either the group entry (a work-item loop) or one fiber per work-item
// that barrier() switches between. Faults of kernel code end the run with an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/program.hpp"
#include "work_item_context.hpp"

namespace zehal::compiler {

// The most work-items of a group of a kernel with barriers (one fiber each).
inline constexpr uint64_t kMaxFiberGroupItems = 1024;

// One kernel of a host module, as the table lists it.
struct HostKernel {
    GroupEntry entry = nullptr;
    bool per_work_item = false;  // has barriers: fibers
    std::vector<ArgInfo> args;   // its signature
};

// Runs `kernel` over `grid`; `local_bytes` of static __local variables per group.
// SUCCESS; INVALID_ARGUMENT for arguments that do not match the signature;
// INVALID_GROUP_SIZE_DIMENSION for a group over kMaxFiberGroupItems of a kernel with
// barriers; ERROR_UNKNOWN with `error` when the kernel faulted.
ze_result_t run_groups(const HostKernel& kernel, uint64_t local_bytes, const LaunchArgs& args, const LaunchGrid& grid,
                       std::string* error);

}  // namespace zehal::compiler
