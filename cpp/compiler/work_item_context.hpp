// The state a work-item's builtins read on the host: one context per work-item of a group
// with barriers (each a coroutine), one updated in place by the work-item loop of a group
// without. The lowered kernel code (host_lowering.cpp) reads its fields at the offsets
// below.
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
    void* frames;          // the runtime's frame memory for the group's coroutines, null in work-item loops
    uint8_t* frame_begin;  // the work-item's coroutine frame (private memory too), empty in loops
    uint8_t* frame_end;
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
inline constexpr uint64_t kFrameBeginOffset = offsetof(WorkItemContext, frame_begin);
inline constexpr uint64_t kFrameEndOffset = offsetof(WorkItemContext, frame_end);
static_assert(sizeof(WorkItemContext) == 184, "the lowering copies 184 bytes");

// The runtime's frame allocator, called once per work-item by the coroutine of a kernel
// with barriers (symbol kFrameSymbol): `bytes` aligned to `align` from context->frames,
// recorded in frame_begin/frame_end; null when there is no memory.
extern "C" void* zehal_work_item_frame(WorkItemContext* context, uint64_t bytes, uint64_t align);

// Entry points the lowering adds per kernel. `args[i]` points to argument i's bytes (for
// __local arguments: to the pointer to the group's memory).
// A kernel without barriers: runs the whole group (a work-item loop).
using GroupEntry = void (*)(void* const* args, WorkItemContext* context);
// A kernel with barriers: makes the coroutine of one work-item, stopped before its first
// instruction, and returns its handle (null when its frame could not be allocated).
using WorkItemStart = void* (*)(void* const* args, WorkItemContext* context);
// Runs a work-item coroutine to its next barrier or its end; 1 when it has ended.
using WorkItemResume = uint8_t (*)(void* handle);

// The table the lowered module exports as "zehal.module": two uint64_t (static __local
// bytes per group, the kernel count), the module's WorkItemResume, then one
// ModuleTableKernel per kernel, in the order of Program::kernels().
struct ModuleTableKernel {
    void* entry;             // a WorkItemStart when per_work_item, else a GroupEntry
    uint64_t per_work_item;  // 1: the kernel has barriers (a coroutine per work-item)
};
struct ModuleTableHeader {
    uint64_t local_bytes;
    uint64_t kernel_count;
    WorkItemResume resume;
};
inline constexpr const char* kModuleTableSymbol = "zehal.module";
// The table the lowered module exports as "zehal.functions": a uint64_t count, then one
// ModuleTableFunction per function kernels may call through a pointer.
struct ModuleTableFunction {
    const char* name;  // NUL-terminated
    void* address;     // the lowered function: its parameters, then the WorkItemContext*
};
inline constexpr const char* kFunctionTableSymbol = "zehal.functions";
inline constexpr const char* kFrameSymbol = "zehal_work_item_frame";

}  // namespace zehal::compiler
