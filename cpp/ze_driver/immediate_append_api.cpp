// Regular command lists executed through an immediate command list
// ("ZE_experimental_immediate_command_list_append").
#include <vector>

#include "command_list.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// Runs closed regular lists on the immediate list's queue, as zeCommandQueueExecuteCommandLists
// runs them on a queue: after the wait list, in order, and the signal event after the last
// list. All or nothing, as an execution: each must be a closed (INVALID_ARGUMENT) regular
// list of the immediate list's device and engine group (INVALID_COMMAND_LIST_TYPE), and
// every command is checked, before anything is queued. A target that is no immediate list
// is INVALID_ARGUMENT.
ze_result_t zeCommandListImmediateAppendCommandListsExp_(ze_command_list_handle_t hCommandListImmediate,
                                                         uint32_t numCommandLists,
                                                         ze_command_list_handle_t* phCommandLists,
                                                         ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                         ze_event_handle_t* phWaitEvents) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> target;
        if (ze_result_t r = command_lists().get(hCommandListImmediate, &target); r != ZE_RESULT_SUCCESS) return r;
        if (!target->immediate()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (numCommandLists > 0 && !phCommandLists) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        Command before, after;
        if (ze_result_t r = wait_list(numWaitEvents, phWaitEvents, &before.waits); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = optional_event(hSignalEvent, &after.signal); r != ZE_RESULT_SUCCESS) return r;
        std::vector<Recorded> recorded(numCommandLists);
        for (uint32_t i = 0; i < numCommandLists; ++i) {
            std::shared_ptr<CommandListObject> list;
            if (ze_result_t r = command_lists().get(phCommandLists[i], &list); r != ZE_RESULT_SUCCESS) return r;
            if (list->immediate() || list->ordinal() != target->ordinal() || list->device() != target->device())
                return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
            if (ze_result_t r = list->recorded(&recorded[i]); r != ZE_RESULT_SUCCESS) return r;
        }
        for (const Recorded& commands : recorded)
            for (const Command& command : *commands)
                if (ze_result_t r = check(command, *target->device()->device); r != ZE_RESULT_SUCCESS) return r;
        if (!before.waits.empty())
            if (ze_result_t r = target->append(std::move(before)); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = execute(recorded, *target->queue(), *target->device()->device); r != ZE_RESULT_SUCCESS)
            return r;
        return target->append(std::move(after));
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeCommandListImmediateAppendCommandListsExp, zeCommandListImmediateAppendCommandListsExp_),
};

}  // namespace

std::span<const Entry> immediate_append_entries() { return kEntries; }

}  // namespace zehal::ze_driver
