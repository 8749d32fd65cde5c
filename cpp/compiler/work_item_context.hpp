// The state a work-item's builtins read on the host: one context per running work-item
// (the work-item loop of a group without barriers updates one context in place). The
// lowered kernel code (host_lowering.cpp) reads its fields at the offsets below.
#pragma once

#include <cstddef>
#include <cstdint>

namespace zehal::compiler {

struct WorkItemContext {
    uint64_t local_id[3];
    uint64_t group_id[3];
    uint64_t local_size[3];
    uint64_t num_groups[3];
    uint64_t global_offset[3];
    uint64_t work_dim;
    uint8_t* local_memory;   // the group's static __local variables, then its __local arguments
    uint64_t local_bytes;    // the bytes of the group's __local memory, from local_memory
    uint8_t* private_begin;  // the work-item's private memory: the stack it runs on
    uint8_t* private_end;
    void* fiber;  // the runtime's state for barrier(), null in work-item loops
};

// Byte offsets of the fields, as the lowering writes them into the IR.
inline constexpr uint64_t kLocalIdOffset = offsetof(WorkItemContext, local_id);
inline constexpr uint64_t kGroupIdOffset = offsetof(WorkItemContext, group_id);
inline constexpr uint64_t kLocalSizeOffset = offsetof(WorkItemContext, local_size);
inline constexpr uint64_t kNumGroupsOffset = offsetof(WorkItemContext, num_groups);
inline constexpr uint64_t kGlobalOffsetOffset = offsetof(WorkItemContext, global_offset);
inline constexpr uint64_t kWorkDimOffset = offsetof(WorkItemContext, work_dim);
inline constexpr uint64_t kLocalMemoryOffset = offsetof(WorkItemContext, local_memory);
inline constexpr uint64_t kLocalBytesOffset = offsetof(WorkItemContext, local_bytes);
inline constexpr uint64_t kPrivateBeginOffset = offsetof(WorkItemContext, private_begin);
inline constexpr uint64_t kPrivateEndOffset = offsetof(WorkItemContext, private_end);
inline constexpr uint64_t kFiberOffset = offsetof(WorkItemContext, fiber);
static_assert(sizeof(WorkItemContext) == 168, "the lowering copies 168 bytes");

// The runtime's barrier: called by lowered kernels (symbol "zehal_work_group_barrier").
extern "C" void zehal_work_group_barrier(WorkItemContext* context);

// Entry points the lowering adds per kernel: a whole group (work-item loop), or one
// work-item (run on a fiber per work-item when the kernel has barriers). `args[i]` points
// to argument i's bytes (for __local arguments: to the pointer to the group's memory).
using GroupEntry = void (*)(void* const* args, WorkItemContext* context);

// The table the lowered module exports as "zehal.module": two uint64_t (static __local
// bytes per group, the kernel count), then one ModuleTableKernel per kernel, in the
// order of Program::kernels().
struct ModuleTableKernel {
    GroupEntry entry;
    uint64_t per_work_item;  // 1: a work-item entry (the kernel has barriers), 0: a group entry
};
inline constexpr const char* kModuleTableSymbol = "zehal.module";
inline constexpr const char* kBarrierSymbol = "zehal_work_group_barrier";

}  // namespace zehal::compiler
