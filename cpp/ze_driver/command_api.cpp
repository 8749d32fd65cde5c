// Command queues, command lists (regular and immediate) and their commands, fences.
#include <limits>

#include "chain.hpp"
#include "command_list.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

// A HAL queue for a queue descriptor on `d`. Flags and priority are hints (every zehal queue
// runs in order) and any value is accepted; a mode other than synchronous is asynchronous.
ze_result_t make_queue(DeviceObject* d, const ze_command_queue_desc_t* desc, std::shared_ptr<hal::Queue>* out) {
    return d->device->create_queue(desc->ordinal, desc->index, out);
}

ze_result_t zeCommandQueueCreate_(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                  const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* phCommandQueue) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phCommandQueue) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        auto object = std::make_shared<QueueObject>();
        object->device = d;
        object->synchronous = desc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
        if (ze_result_t r = make_queue(d, desc, &object->queue); r != ZE_RESULT_SUCCESS) return r;
        *phCommandQueue = to_handle<ze_command_queue_handle_t>(queues().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandQueueDestroy_(ze_command_queue_handle_t hCommandQueue) {
    return ze_guarded([&] {
        std::shared_ptr<QueueObject> q = queues().remove(hCommandQueue);
        if (!q) {
            std::shared_ptr<QueueObject> none;
            return queues().get(hCommandQueue, &none);
        }
        // No wait: what was submitted still runs (the HAL queue's engine keeps it), and a
        // command waiting for an event the host never signals must not hang the caller.
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandQueueExecuteCommandLists_(ze_command_queue_handle_t hCommandQueue, uint32_t numCommandLists,
                                               ze_command_list_handle_t* phCommandLists, ze_fence_handle_t hFence) {
    return ze_guarded([&] {
        std::shared_ptr<QueueObject> q;
        if (ze_result_t r = queues().get(hCommandQueue, &q); r != ZE_RESULT_SUCCESS) return r;
        if (!phCommandLists) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (numCommandLists == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
        std::shared_ptr<FenceObject> fence;
        if (hFence) {
            if (ze_result_t r = fences().get(hFence, &fence); r != ZE_RESULT_SUCCESS) return r;
            if (fence->queue != q) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        // All or nothing: every list is found, closed and checked before one command is queued.
        std::vector<Recorded> recorded(numCommandLists);
        for (uint32_t i = 0; i < numCommandLists; ++i) {
            std::shared_ptr<CommandListObject> list;
            if (ze_result_t r = command_lists().get(phCommandLists[i], &list); r != ZE_RESULT_SUCCESS) return r;
            if (list->immediate() || list->ordinal() != q->queue->ordinal() || list->device() != q->device)
                return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
            if (ze_result_t r = list->recorded(&recorded[i]); r != ZE_RESULT_SUCCESS) return r;
        }
        if (ze_result_t r = execute(recorded, *q->queue, *q->device->device); r != ZE_RESULT_SUCCESS) return r;
        if (fence)
            if (ze_result_t r = q->queue->append_barrier(fence->event, {}); r != ZE_RESULT_SUCCESS) return r;
        return q->synchronous ? q->queue->host_synchronize(kForever) : ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandQueueSynchronize_(ze_command_queue_handle_t hCommandQueue, uint64_t timeout) {
    return ze_guarded([&] {
        std::shared_ptr<QueueObject> q;
        if (ze_result_t r = queues().get(hCommandQueue, &q); r != ZE_RESULT_SUCCESS) return r;
        return q->queue->host_synchronize(timeout);
    });
}

ze_result_t zeCommandListCreate_(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                 const ze_command_list_desc_t* desc, ze_command_list_handle_t* phCommandList) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phCommandList) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;  // flags: hints, ignored
        const hal::DeviceProperties& p = d->device->properties();
        const uint32_t groups = p.copy_engines > 0 ? 2 : 1;
        if (desc->commandQueueGroupOrdinal >= groups) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        auto list = std::make_shared<CommandListObject>(hContext, d, desc->commandQueueGroupOrdinal);
        *phCommandList = to_handle<ze_command_list_handle_t>(command_lists().add(std::move(list)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandListCreateImmediate_(ze_context_handle_t hContext, ze_device_handle_t hDevice,
                                          const ze_command_queue_desc_t* altdesc,
                                          ze_command_list_handle_t* phCommandList) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!altdesc || !phCommandList) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<hal::Queue> queue;
        if (ze_result_t r = make_queue(d, altdesc, &queue); r != ZE_RESULT_SUCCESS) return r;
        const bool synchronous = altdesc->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
        auto list = std::make_shared<CommandListObject>(hContext, d, std::move(queue), synchronous);
        *phCommandList = to_handle<ze_command_list_handle_t>(command_lists().add(std::move(list)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeCommandListDestroy_(ze_command_list_handle_t hCommandList) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list = command_lists().remove(hCommandList);
        if (!list) {
            std::shared_ptr<CommandListObject> none;
            return command_lists().get(hCommandList, &none);
        }
        // No wait: an immediate list's commands still run on its queue (the HAL queue's engine
        // keeps them), and one waiting for an event never signalled must not hang the caller.
        return ZE_RESULT_SUCCESS;
    });
}

// Runs `f` on the command list of `hCommandList`.
template <typename F>
ze_result_t with_list(ze_command_list_handle_t hCommandList, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list;
        if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
        return f(*list);
    });
}

// The signal event and wait list of an append, into `c`.
ze_result_t events_of(ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents,
                      Command* c) {
    if (ze_result_t r = optional_event(hSignalEvent, &c->signal); r != ZE_RESULT_SUCCESS) return r;
    return wait_list(numWaitEvents, phWaitEvents, &c->waits);
}

ze_result_t zeCommandListClose_(ze_command_list_handle_t hCommandList) {
    return with_list(hCommandList, [](CommandListObject& l) { return l.close(); });
}

ze_result_t zeCommandListReset_(ze_command_list_handle_t hCommandList) {
    return with_list(hCommandList, [](CommandListObject& l) { return l.reset(); });
}

ze_result_t zeCommandListHostSynchronize_(ze_command_list_handle_t hCommandList, uint64_t timeout) {
    return with_list(hCommandList, [&](CommandListObject& l) { return l.host_synchronize(timeout); });
}

ze_result_t zeCommandListAppendBarrier_(ze_command_list_handle_t hCommandList, ze_event_handle_t hSignalEvent,
                                        uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        Command c;
        if (ze_result_t r = events_of(hSignalEvent, numWaitEvents, phWaitEvents, &c); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendMemoryRangesBarrier_(ze_command_list_handle_t hCommandList, uint32_t numRanges,
                                                    const size_t* pRangeSizes, const void** pRanges,
                                                    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                    ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!pRangeSizes || !pRanges) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        (void)numRanges;  // a full barrier orders every range
        Command c;
        if (ze_result_t r = events_of(hSignalEvent, numWaitEvents, phWaitEvents, &c); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendMemoryCopy_(ze_command_list_handle_t hCommandList, void* dstptr, const void* srcptr,
                                           size_t size, ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                           ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!dstptr || !srcptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        Command c;
        // An empty copy moves nothing; its events behave as a barrier's in its place (as
        // Intel's driver does: programs signal an event with one).
        c.kind = size == 0 ? Command::Kind::barrier : Command::Kind::copy;
        c.dst = dstptr;
        c.src = srcptr;
        c.size = size;
        if (ze_result_t r = events_of(hSignalEvent, numWaitEvents, phWaitEvents, &c); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendMemoryFill_(ze_command_list_handle_t hCommandList, void* ptr, const void* pattern,
                                           size_t pattern_size, size_t size, ze_event_handle_t hSignalEvent,
                                           uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!ptr || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (!hal::valid_fill_pattern_size(pattern_size)) return ZE_RESULT_ERROR_INVALID_SIZE;
        Command c;
        c.kind = size == 0 ? Command::Kind::barrier : Command::Kind::fill;  // as an empty copy
        c.dst = ptr;
        c.size = size;
        const auto* bytes = static_cast<const uint8_t*>(pattern);
        c.pattern.assign(bytes, bytes + pattern_size);
        if (ze_result_t r = events_of(hSignalEvent, numWaitEvents, phWaitEvents, &c); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendSignalEvent_(ze_command_list_handle_t hCommandList, ze_event_handle_t hEvent) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!hEvent) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        Command c;
        if (ze_result_t r = optional_event(hEvent, &c.signal); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendWaitOnEvents_(ze_command_list_handle_t hCommandList, uint32_t numEvents,
                                             ze_event_handle_t* phEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!phEvents) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        Command c;
        if (ze_result_t r = wait_list(numEvents, phEvents, &c.waits); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendEventReset_(ze_command_list_handle_t hCommandList, ze_event_handle_t hEvent) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!hEvent) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        Command c;
        c.kind = Command::Kind::reset;
        if (ze_result_t r = optional_event(hEvent, &c.reset_event); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendWriteGlobalTimestamp_(ze_command_list_handle_t hCommandList, uint64_t* dstptr,
                                                     ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                     ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!dstptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (reinterpret_cast<uintptr_t>(dstptr) % alignof(uint64_t)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        Command c;
        c.kind = Command::Kind::write_timestamp;
        c.dst = dstptr;
        if (ze_result_t r = events_of(hSignalEvent, numWaitEvents, phWaitEvents, &c); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeCommandListAppendQueryKernelTimestamps_(ze_command_list_handle_t hCommandList, uint32_t numEvents,
                                                      ze_event_handle_t* phEvents, void* dstptr, const size_t* pOffsets,
                                                      ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                      ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!phEvents || !dstptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (numEvents == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
        Command c;
        c.kind = Command::Kind::query_timestamps;
        c.dst = dstptr;
        if (ze_result_t r = wait_list(numEvents, phEvents, &c.queried); r != ZE_RESULT_SUCCESS) return r;
        if (pOffsets) c.offsets.assign(pOffsets, pOffsets + numEvents);
        if (ze_result_t r = events_of(hSignalEvent, numWaitEvents, phWaitEvents, &c); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

ze_result_t zeFenceCreate_(ze_command_queue_handle_t hCommandQueue, const ze_fence_desc_t* desc,
                           ze_fence_handle_t* phFence) {
    return ze_guarded([&] {
        std::shared_ptr<QueueObject> q;
        if (ze_result_t r = queues().get(hCommandQueue, &q); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phFence) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;  // flags other than SIGNALED: ignored
        std::shared_ptr<hal::EventPool> pool;
        if (ze_result_t r = q->device->device->create_event_pool(1, hal::kPoolHostVisible, &pool);
            r != ZE_RESULT_SUCCESS)
            return r;
        auto fence = std::make_shared<FenceObject>();
        fence->queue = q;
        if (ze_result_t r = pool->event(0, &fence->event); r != ZE_RESULT_SUCCESS) return r;
        if (desc->flags & ZE_FENCE_FLAG_SIGNALED)
            if (ze_result_t r = fence->event->host_signal(); r != ZE_RESULT_SUCCESS) return r;
        *phFence = to_handle<ze_fence_handle_t>(fences().add(std::move(fence)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeFenceDestroy_(ze_fence_handle_t hFence) {
    return ze_guarded([&] {
        std::shared_ptr<FenceObject> f;
        if (ze_result_t r = fences().get(hFence, &f); r != ZE_RESULT_SUCCESS) return r;
        fences().remove(hFence);
        return ZE_RESULT_SUCCESS;
    });
}

// Runs `f` on the event of the fence of `hFence`.
template <typename F>
ze_result_t with_fence(ze_fence_handle_t hFence, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<FenceObject> fence;
        if (ze_result_t r = fences().get(hFence, &fence); r != ZE_RESULT_SUCCESS) return r;
        return f(*fence->event);
    });
}

ze_result_t zeFenceHostSynchronize_(ze_fence_handle_t hFence, uint64_t timeout) {
    return with_fence(hFence, [&](hal::Event& e) { return e.host_synchronize(timeout); });
}

ze_result_t zeFenceQueryStatus_(ze_fence_handle_t hFence) {
    return with_fence(hFence, [](hal::Event& e) { return e.query(); });
}

ze_result_t zeFenceReset_(ze_fence_handle_t hFence) {
    return with_fence(hFence, [](hal::Event& e) { return e.host_reset(); });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeCommandQueueCreate, zeCommandQueueCreate_),
    ZEHAL_ENTRY(zeCommandQueueDestroy, zeCommandQueueDestroy_),
    ZEHAL_ENTRY(zeCommandQueueExecuteCommandLists, zeCommandQueueExecuteCommandLists_),
    ZEHAL_ENTRY(zeCommandQueueSynchronize, zeCommandQueueSynchronize_),
    ZEHAL_ENTRY(zeCommandListCreate, zeCommandListCreate_),
    ZEHAL_ENTRY(zeCommandListCreateImmediate, zeCommandListCreateImmediate_),
    ZEHAL_ENTRY(zeCommandListDestroy, zeCommandListDestroy_),
    ZEHAL_ENTRY(zeCommandListClose, zeCommandListClose_),
    ZEHAL_ENTRY(zeCommandListReset, zeCommandListReset_),
    ZEHAL_ENTRY(zeCommandListHostSynchronize, zeCommandListHostSynchronize_),
    ZEHAL_ENTRY(zeCommandListAppendBarrier, zeCommandListAppendBarrier_),
    ZEHAL_ENTRY(zeCommandListAppendMemoryRangesBarrier, zeCommandListAppendMemoryRangesBarrier_),
    ZEHAL_ENTRY(zeCommandListAppendMemoryCopy, zeCommandListAppendMemoryCopy_),
    ZEHAL_ENTRY(zeCommandListAppendMemoryFill, zeCommandListAppendMemoryFill_),
    ZEHAL_ENTRY(zeCommandListAppendSignalEvent, zeCommandListAppendSignalEvent_),
    ZEHAL_ENTRY(zeCommandListAppendWaitOnEvents, zeCommandListAppendWaitOnEvents_),
    ZEHAL_ENTRY(zeCommandListAppendEventReset, zeCommandListAppendEventReset_),
    ZEHAL_ENTRY(zeCommandListAppendWriteGlobalTimestamp, zeCommandListAppendWriteGlobalTimestamp_),
    ZEHAL_ENTRY(zeCommandListAppendQueryKernelTimestamps, zeCommandListAppendQueryKernelTimestamps_),
    ZEHAL_ENTRY(zeFenceCreate, zeFenceCreate_),
    ZEHAL_ENTRY(zeFenceDestroy, zeFenceDestroy_),
    ZEHAL_ENTRY(zeFenceHostSynchronize, zeFenceHostSynchronize_),
    ZEHAL_ENTRY(zeFenceQueryStatus, zeFenceQueryStatus_),
    ZEHAL_ENTRY(zeFenceReset, zeFenceReset_),
};

}  // namespace

std::span<const Entry> command_entries() { return kEntries; }

}  // namespace zehal::ze_driver
