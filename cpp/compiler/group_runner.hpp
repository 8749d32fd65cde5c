// Running a lowered kernel's groups on the pool: per group the argument slots, the
// group's __local memory (static variables, then the __local arguments), the work-item
// context, and either the group entry (a work-item loop) or a coroutine per work-item,
// resumed in turn from barrier to barrier. Faults of kernel code end the run with an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "compiler/program.hpp"
#include "work_item_context.hpp"

namespace zehal::compiler {

// One kernel of a host module, as the table lists it.
struct HostKernel {
    bool per_work_item = false;     // has barriers: a coroutine per work-item
    GroupEntry entry = nullptr;     // without barriers
    WorkItemStart start = nullptr;  // with barriers
    WorkItemResume resume = nullptr;
    std::vector<ArgInfo> args;  // its signature
};

// Runs `kernel` over `grid`; `local_bytes` of static __local variables per group.
// SUCCESS; INVALID_ARGUMENT for arguments that do not match the signature;
// ERROR_UNKNOWN with `error` when the kernel faulted or a group's coroutine frames could
// not be allocated.
ze_result_t run_groups(const HostKernel& kernel, uint64_t local_bytes, const LaunchArgs& args, const LaunchGrid& grid,
                       std::string* error);

}  // namespace zehal::compiler
