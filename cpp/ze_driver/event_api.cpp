// Event pools, events and their kernel timestamps (core and the kernel timestamps extension).
#include "chain.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

static_assert(sizeof(ze_kernel_timestamp_result_t) == sizeof(hal::KernelTimestampResult) &&
                  sizeof(ze_synchronized_timestamp_result_ext_t) == sizeof(hal::KernelTimestampResult),
              "a kernel timestamp packet is four 64-bit values: global start/end, context start/end");

ze_result_t zeEventPoolCreate_(ze_context_handle_t hContext, const ze_event_pool_desc_t* desc, uint32_t numDevices,
                               ze_device_handle_t* phDevices, ze_event_pool_handle_t* phEventPool) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phEventPool) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (numDevices > 0 && !phDevices) return ZE_RESULT_ERROR_INVALID_SIZE;
        // The HAL pool is the first named device's, else the driver's first device's; the
        // pool is made for the devices named, else for every device (a streamer or tracer of
        // any of them takes its events as notifications: metrics::Notification).
        auto object = std::make_shared<EventPoolObject>();
        for (uint32_t i = 0; i < numDevices; ++i) {
            DeviceObject* each = nullptr;
            if (ze_result_t r = device_of(phDevices[i], &each); r != ZE_RESULT_SUCCESS) return r;
            object->made_for.push_back(each);
        }
        if (numDevices == 0)
            for (const auto& each : driver()->devices) object->made_for.push_back(each.get());
        DeviceObject* d = object->made_for.front();
        object->device = d;
        object->context = hContext;
        object->flags = desc->flags;
        // Flag bits the HAL does not know (none defined up to the reported version) are ignored.
        const uint32_t flags = desc->flags & hal::kPoolValidFlags;
        if (ze_result_t r = d->device->create_event_pool(desc->count, flags, &object->pool); r != ZE_RESULT_SUCCESS)
            return r;
        *phEventPool = to_handle<ze_event_pool_handle_t>(event_pools().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventPoolDestroy_(ze_event_pool_handle_t hEventPool) {
    return ze_guarded([&] {
        std::shared_ptr<EventPoolObject> p;
        if (ze_result_t r = event_pools().get(hEventPool, &p); r != ZE_RESULT_SUCCESS) return r;
        event_pools().remove(hEventPool);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventCreate_(ze_event_pool_handle_t hEventPool, const ze_event_desc_t* desc, ze_event_handle_t* phEvent) {
    return ze_guarded([&] {
        std::shared_ptr<EventPoolObject> p;
        if (ze_result_t r = event_pools().get(hEventPool, &p); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phEvent) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;  // scopes: hints, ignored
        auto object = std::make_shared<EventObject>();
        object->device = p->device;
        object->made_for = p->made_for;
        object->pool = hEventPool;
        object->signal_scope = desc->signal;
        object->wait_scope = desc->wait;
        if (ze_result_t r = p->pool->event(desc->index, &object->event); r != ZE_RESULT_SUCCESS) return r;
        *phEvent = to_handle<ze_event_handle_t>(events().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventDestroy_(ze_event_handle_t hEvent) {
    return ze_guarded([&] {
        std::shared_ptr<EventObject> e;
        if (ze_result_t r = events().get(hEvent, &e); r != ZE_RESULT_SUCCESS) return r;
        events().remove(hEvent);
        return ZE_RESULT_SUCCESS;
    });
}

// Runs `f` on the HAL event of `hEvent`.
template <typename F>
ze_result_t with_event(ze_event_handle_t hEvent, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<EventObject> e;
        if (ze_result_t r = events().get(hEvent, &e); r != ZE_RESULT_SUCCESS) return r;
        return f(*e->event);
    });
}

ze_result_t zeEventHostSignal_(ze_event_handle_t hEvent) {
    return with_event(hEvent, [](hal::Event& e) { return e.host_signal(); });
}

ze_result_t zeEventHostSynchronize_(ze_event_handle_t hEvent, uint64_t timeout) {
    return with_event(hEvent, [&](hal::Event& e) { return e.host_synchronize(timeout); });
}

ze_result_t zeEventQueryStatus_(ze_event_handle_t hEvent) {
    return with_event(hEvent, [](hal::Event& e) { return e.query(); });
}

ze_result_t zeEventHostReset_(ze_event_handle_t hEvent) {
    return with_event(hEvent, [](hal::Event& e) { return e.host_reset(); });
}

ze_result_t zeEventQueryKernelTimestamp_(ze_event_handle_t hEvent, ze_kernel_timestamp_result_t* dstptr) {
    return with_event(hEvent, [&](hal::Event& e) {
        if (!dstptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        uint32_t count = 1;
        return e.query_kernel_timestamps(&count, reinterpret_cast<hal::KernelTimestampResult*>(dstptr));
    });
}

// The extension's query: the packet count, then kernel timestamps (device ticks) and
// synchronized ones (host ns) into whichever buffers the results structure gives.
ze_result_t zeEventQueryKernelTimestampsExt_(ze_event_handle_t hEvent, ze_device_handle_t hDevice, uint32_t* pCount,
                                             ze_event_query_kernel_timestamps_results_ext_properties_t* pResults) {
    return with_event(hEvent, [&](hal::Event& e) {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (*pCount == 0 || !pResults) {
            *pCount = 0;
            return e.query_kernel_timestamps(pCount, nullptr);
        }
        const uint32_t asked = *pCount;
        if (auto* out = pResults->pKernelTimestampsBuffer) {
            *pCount = asked;
            auto* packets = reinterpret_cast<hal::KernelTimestampResult*>(out);
            if (ze_result_t r = e.query_kernel_timestamps(pCount, packets); r != ZE_RESULT_SUCCESS) return r;
        }
        if (auto* out = pResults->pSynchronizedTimestampsBuffer) {
            *pCount = asked;
            auto* packets = reinterpret_cast<hal::KernelTimestampResult*>(out);
            if (ze_result_t r = e.query_synchronized_timestamps(pCount, packets); r != ZE_RESULT_SUCCESS) return r;
        }
        if (!pResults->pKernelTimestampsBuffer && !pResults->pSynchronizedTimestampsBuffer) {
            *pCount = 0;
            return e.query_kernel_timestamps(pCount, nullptr);
        }
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeEventPoolCreate, zeEventPoolCreate_),
    ZEHAL_ENTRY(zeEventPoolDestroy, zeEventPoolDestroy_),
    ZEHAL_ENTRY(zeEventCreate, zeEventCreate_),
    ZEHAL_ENTRY(zeEventDestroy, zeEventDestroy_),
    ZEHAL_ENTRY(zeEventHostSignal, zeEventHostSignal_),
    ZEHAL_ENTRY(zeEventHostSynchronize, zeEventHostSynchronize_),
    ZEHAL_ENTRY(zeEventQueryStatus, zeEventQueryStatus_),
    ZEHAL_ENTRY(zeEventHostReset, zeEventHostReset_),
    ZEHAL_ENTRY(zeEventQueryKernelTimestamp, zeEventQueryKernelTimestamp_),
    ZEHAL_ENTRY(zeEventQueryKernelTimestampsExt, zeEventQueryKernelTimestampsExt_),
};

}  // namespace

std::span<const Entry> event_entries() { return kEntries; }

}  // namespace zehal::ze_driver
