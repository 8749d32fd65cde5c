// Kernel launches in command lists (SEMANTICS §12): a command like a copy, run through the
// queue's append_launch; its signal event's kernel timestamps are the kernel's start and end.
#include "command_list.hpp"
#include "dispatch.hpp"
#include "kernel_object.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// An immediate list queues the launch now with the kernel object's own HAL kernel (the
// queue takes a snapshot of its arguments); a regular list records a copy of the kernel as
// it is now (KernelObject::launchable), so later argument changes do not reach the
// recorded launch, as the specification wants. A kernel of another device's module is
// INVALID_ARGUMENT, so is a list of the copy engines; an argument left unset is
// INVALID_ARGUMENT.
ze_result_t zeCommandListAppendLaunchKernel_(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
                                             const ze_group_count_t* pLaunchFuncArgs, ze_event_handle_t hSignalEvent,
                                             uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list;
        if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
        std::shared_ptr<KernelObject> kernel;
        if (ze_result_t r = kernels().get(hKernel, &kernel); r != ZE_RESULT_SUCCESS) return r;
        if (!pLaunchFuncArgs) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // Kernels run on the compute engines (ordinal 0); the copy engines run no kernels.
        if (kernel->module().device != list->device() || list->ordinal() != hal::kComputeOrdinal)
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        Command c;
        c.kind = Command::Kind::launch;
        c.groups = {pLaunchFuncArgs->groupCountX, pLaunchFuncArgs->groupCountY, pLaunchFuncArgs->groupCountZ};
        if (ze_result_t r = optional_event(hSignalEvent, &c.signal); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = wait_list(numWaitEvents, phWaitEvents, &c.waits); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = kernel->launchable(!list->immediate(), &c.kernel); r != ZE_RESULT_SUCCESS) return r;
        return list->append(std::move(c));
    });
}

// An indirect launch of `kernels` (count handles at `handles`): each kernel as
// zeCommandListAppendLaunchKernel takes it, the group counts and the kernel count read by
// the device when the command runs (hal::Queue::append_launch_indirect); UNSUPPORTED_FEATURE
// where the device cannot (CUDA).
ze_result_t append_indirect(ze_command_list_handle_t hCommandList, uint32_t count, const ze_kernel_handle_t* handles,
                            const uint32_t* pCountBuffer, const ze_group_count_t* pLaunchArgumentsBuffer,
                            ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
    std::shared_ptr<CommandListObject> list;
    if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
    if (!handles || !pLaunchArgumentsBuffer) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (list->ordinal() != hal::kComputeOrdinal) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    Command c;
    c.kind = Command::Kind::launch_indirect;
    c.kernels.resize(count);
    for (uint32_t i = 0; i < count; ++i) {
        std::shared_ptr<KernelObject> kernel;
        if (ze_result_t r = kernels().get(handles[i], &kernel); r != ZE_RESULT_SUCCESS) return r;
        if (kernel->module().device != list->device()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (ze_result_t r = kernel->launchable(!list->immediate(), &c.kernels[i]); r != ZE_RESULT_SUCCESS) return r;
    }
    // ze_group_count_t is three uint32_t, as hal::GroupCount.
    static_assert(sizeof(ze_group_count_t) == sizeof(hal::GroupCount));
    c.indirect_groups = reinterpret_cast<const hal::GroupCount*>(pLaunchArgumentsBuffer);
    c.indirect_count = pCountBuffer;
    if (ze_result_t r = optional_event(hSignalEvent, &c.signal); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = wait_list(numWaitEvents, phWaitEvents, &c.waits); r != ZE_RESULT_SUCCESS) return r;
    return list->append(std::move(c));
}

ze_result_t zeCommandListAppendLaunchKernelIndirect_(ze_command_list_handle_t hCommandList, ze_kernel_handle_t hKernel,
                                                     const ze_group_count_t* pLaunchArgumentsBuffer,
                                                     ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                     ze_event_handle_t* phWaitEvents) {
    return ze_guarded([&] {
        return append_indirect(hCommandList, 1, &hKernel, nullptr, pLaunchArgumentsBuffer, hSignalEvent, numWaitEvents,
                               phWaitEvents);
    });
}

// The first *pCountBuffer of the kernels run (at most numKernels), kernel i over
// pLaunchArgumentsBuffer[i]; the signal event is signalled after the last.
ze_result_t zeCommandListAppendLaunchMultipleKernelsIndirect_(ze_command_list_handle_t hCommandList,
                                                              uint32_t numKernels, ze_kernel_handle_t* phKernels,
                                                              const uint32_t* pCountBuffer,
                                                              const ze_group_count_t* pLaunchArgumentsBuffer,
                                                              ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                              ze_event_handle_t* phWaitEvents) {
    return ze_guarded([&] {
        if (!pCountBuffer) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return append_indirect(hCommandList, numKernels, phKernels, pCountBuffer, pLaunchArgumentsBuffer, hSignalEvent,
                               numWaitEvents, phWaitEvents);
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeCommandListAppendLaunchKernel, zeCommandListAppendLaunchKernel_),
    ZEHAL_ENTRY(zeCommandListAppendLaunchKernelIndirect, zeCommandListAppendLaunchKernelIndirect_),
    ZEHAL_ENTRY(zeCommandListAppendLaunchMultipleKernelsIndirect, zeCommandListAppendLaunchMultipleKernelsIndirect_),
};

}  // namespace

std::span<const Entry> launch_entries() { return kEntries; }

}  // namespace zehal::ze_driver
