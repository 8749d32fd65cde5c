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

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeCommandListAppendLaunchKernel, zeCommandListAppendLaunchKernel_),
};

}  // namespace

std::span<const Entry> launch_entries() { return kEntries; }

}  // namespace zehal::ze_driver
