// The core API's object queries (API 1.9): what a tool that appends its own commands to an
// application's lists and queues needs to find its way around them (the context and device
// of a list, the pool of an event, ...). Each answers from what the object was created with.
#include "command_list.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "spec_ext.h"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// Runs `answer(object)` for the live object of `handle` in `table`; INVALID_NULL_HANDLE for
// a handle that is none, INVALID_NULL_POINTER for a null `out`.
template <typename Object, typename Handle, typename Out, typename Answer>
ze_result_t query(HandleTable<Object>& table, Handle handle, Out* out, Answer answer) {
    return ze_guarded([&] {
        std::shared_ptr<Object> object;
        if (ze_result_t r = table.get(handle, &object); r != ZE_RESULT_SUCCESS) return r;
        if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return answer(*object);
    });
}

ze_result_t zeCommandQueueGetOrdinal_(ze_command_queue_handle_t hCommandQueue, uint32_t* pOrdinal) {
    return query(queues(), hCommandQueue, pOrdinal, [&](const QueueObject& q) {
        *pOrdinal = q.queue->ordinal();
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandQueueGetIndex_(ze_command_queue_handle_t hCommandQueue, uint32_t* pIndex) {
    return query(queues(), hCommandQueue, pIndex, [&](const QueueObject& q) {
        *pIndex = q.queue->index();
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandListGetDeviceHandle_(ze_command_list_handle_t hCommandList, ze_device_handle_t* phDevice) {
    return query(command_lists(), hCommandList, phDevice, [&](const CommandListObject& l) {
        *phDevice = handle_of(l.device());
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandListGetContextHandle_(ze_command_list_handle_t hCommandList, ze_context_handle_t* phContext) {
    return query(command_lists(), hCommandList, phContext, [&](const CommandListObject& l) {
        *phContext = l.context();
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandListGetOrdinal_(ze_command_list_handle_t hCommandList, uint32_t* pOrdinal) {
    return query(command_lists(), hCommandList, pOrdinal, [&](const CommandListObject& l) {
        *pOrdinal = l.ordinal();
        return ZE_RESULT_SUCCESS;
    });
}

// The index of an immediate list's queue in its group; INVALID_ARGUMENT for a regular list.
ze_result_t zeCommandListImmediateGetIndex_(ze_command_list_handle_t hCommandListImmediate, uint32_t* pIndex) {
    return query(command_lists(), hCommandListImmediate, pIndex, [&](const CommandListObject& l) {
        if (!l.immediate()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        *pIndex = l.queue()->index();
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandListIsImmediate_(ze_command_list_handle_t hCommandList, ze_bool_t* pIsImmediate) {
    return query(command_lists(), hCommandList, pIsImmediate, [&](const CommandListObject& l) {
        *pIsImmediate = l.immediate();
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventGetEventPool_(ze_event_handle_t hEvent, ze_event_pool_handle_t* phEventPool) {
    return query(events(), hEvent, phEventPool, [&](const EventObject& e) {
        *phEventPool = e.pool;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventGetSignalScope_(ze_event_handle_t hEvent, ze_event_scope_flags_t* pSignalScope) {
    return query(events(), hEvent, pSignalScope, [&](const EventObject& e) {
        *pSignalScope = e.signal_scope;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventGetWaitScope_(ze_event_handle_t hEvent, ze_event_scope_flags_t* pWaitScope) {
    return query(events(), hEvent, pWaitScope, [&](const EventObject& e) {
        *pWaitScope = e.wait_scope;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventPoolGetContextHandle_(ze_event_pool_handle_t hEventPool, ze_context_handle_t* phContext) {
    return query(event_pools(), hEventPool, phContext, [&](const EventPoolObject& p) {
        *phContext = p.context;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventPoolGetFlags_(ze_event_pool_handle_t hEventPool, ze_event_pool_flags_t* pFlags) {
    return query(event_pools(), hEventPool, pFlags, [&](const EventPoolObject& p) {
        *pFlags = p.flags;
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeCommandQueueGetOrdinal, zeCommandQueueGetOrdinal_),
    ZEHAL_ENTRY(zeCommandQueueGetIndex, zeCommandQueueGetIndex_),
    ZEHAL_ENTRY(zeCommandListGetDeviceHandle, zeCommandListGetDeviceHandle_),
    ZEHAL_ENTRY(zeCommandListGetContextHandle, zeCommandListGetContextHandle_),
    ZEHAL_ENTRY(zeCommandListGetOrdinal, zeCommandListGetOrdinal_),
    ZEHAL_ENTRY(zeCommandListImmediateGetIndex, zeCommandListImmediateGetIndex_),
    ZEHAL_ENTRY(zeCommandListIsImmediate, zeCommandListIsImmediate_),
    ZEHAL_ENTRY(zeEventGetEventPool, zeEventGetEventPool_),
    ZEHAL_ENTRY(zeEventGetSignalScope, zeEventGetSignalScope_),
    ZEHAL_ENTRY(zeEventGetWaitScope, zeEventGetWaitScope_),
    ZEHAL_ENTRY(zeEventPoolGetContextHandle, zeEventPoolGetContextHandle_),
    ZEHAL_ENTRY(zeEventPoolGetFlags, zeEventPoolGetFlags_),
};

}  // namespace

std::span<const Entry> object_query_entries() { return kEntries; }

}  // namespace zehal::ze_driver
