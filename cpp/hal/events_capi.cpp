// The C API of zehal/events.h over hal::Device, hal::EventPool and hal::Event.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <variant>

#include "common/api_call_log.hpp"
#include "hal/device_handle.hpp"
#include "common/c_boundary.hpp"
#include "hal/event_handle.hpp"
#include "hal/types.hpp"

static_assert(sizeof(zehal_kernel_timestamp_result_t) == sizeof(zehal::hal::KernelTimestampResult) &&
                  offsetof(zehal_kernel_timestamp_result_t, global.kernel_end) ==
                      offsetof(zehal::hal::KernelTimestampResult, global_end) &&
                  offsetof(zehal_kernel_timestamp_result_t, context.kernel_start) ==
                      offsetof(zehal::hal::KernelTimestampResult, context_start),
              "the C result has the HAL's layout");
static_assert(ZEHAL_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP == zehal::hal::kPoolKernelMappedTimestamp &&
                  ZEHAL_EVENT_POOL_FLAG_KERNEL_TIMESTAMP == zehal::hal::kPoolKernelTimestamp &&
                  ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_SYNCHRONIZED == zehal::hal::kTimestampSynchronized,
              "C flags are the HAL's");

namespace zehal::capi {

namespace {

// A live pool handle: the pool and how many event handles it has.
struct PoolEntry {
    std::shared_ptr<hal::EventPool> pool;
    uint64_t events = 0;
};
// A live event handle: the event and the handle of its pool.
struct EventEntry {
    hal::EventRef event;
    uint64_t pool = 0;
};

// Handles are numbers, never reused, so a destroyed handle is recognised (not a dangling
// pointer). Every entry lives in one table behind one mutex; no call blocks under it.
class HandleTable {
public:
    static HandleTable& get() {
        static HandleTable* table = new HandleTable;  // never destroyed: usable during exit
        return *table;
    }

    uint64_t add(std::variant<PoolEntry, EventEntry> entry) {
        std::lock_guard lock(mu_);
        const uint64_t id = next_++;
        entries_.emplace(id, std::move(entry));
        return id;
    }
    template <typename T>
    T* find_locked(uint64_t id) {
        auto it = entries_.find(id);
        return it == entries_.end() ? nullptr : std::get_if<T>(&it->second);
    }
    std::shared_ptr<hal::EventPool> pool(uint64_t id) {
        std::lock_guard lock(mu_);
        const PoolEntry* e = find_locked<PoolEntry>(id);
        return e ? e->pool : nullptr;
    }
    hal::EventRef event(uint64_t id) {
        std::lock_guard lock(mu_);
        const EventEntry* e = find_locked<EventEntry>(id);
        return e ? e->event : nullptr;
    }
    ze_result_t add_event(uint64_t pool_id, hal::EventRef event, uint64_t* id) {
        std::lock_guard lock(mu_);
        PoolEntry* p = find_locked<PoolEntry>(pool_id);
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        *id = next_++;
        entries_.emplace(*id, EventEntry{std::move(event), pool_id});
        ++p->events;
        return ZE_RESULT_SUCCESS;
    }
    ze_result_t remove_pool(uint64_t id) {
        std::shared_ptr<hal::EventPool> last;  // released after the lock
        std::lock_guard lock(mu_);
        PoolEntry* p = find_locked<PoolEntry>(id);
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (p->events) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
        last = std::move(p->pool);
        entries_.erase(id);
        return ZE_RESULT_SUCCESS;
    }
    ze_result_t remove_event(uint64_t id) {
        hal::EventRef last;  // released after the lock
        std::lock_guard lock(mu_);
        EventEntry* e = find_locked<EventEntry>(id);
        if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (PoolEntry* p = find_locked<PoolEntry>(e->pool)) --p->events;
        last = std::move(e->event);
        entries_.erase(id);
        return ZE_RESULT_SUCCESS;
    }

private:
    std::mutex mu_;
    uint64_t next_ = 1;
    std::unordered_map<uint64_t, std::variant<PoolEntry, EventEntry>> entries_;
};

uint64_t id_of(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }

}  // namespace

hal::EventRef event_from_handle(zehal_event_t handle) {
    return handle ? HandleTable::get().event(id_of(handle)) : nullptr;
}

std::shared_ptr<hal::EventPool> event_pool_from_handle(zehal_event_pool_t handle) {
    return handle ? HandleTable::get().pool(id_of(handle)) : nullptr;
}

}  // namespace zehal::capi

using zehal::capi::device_from_handle;
using zehal::capi::event_from_handle;
using zehal::capi::HandleTable;

extern "C" {

ze_result_t zehal_device_get_timestamp_properties(zehal_device_t device,
                                                  zehal_device_timestamp_properties_t* properties) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        zehal::hal::Device* d = device_from_handle(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const zehal::hal::DeviceProperties& p = d->properties();
        properties->flags = p.timestamp_flags;
        properties->kernel_timestamp_valid_bits = p.kernel_timestamp_valid_bits;
        properties->timestamp_valid_bits = p.timestamp_valid_bits;
        properties->reserved = 0;
        properties->timer_resolution_hz = p.timer_hz;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_device_get_global_timestamps(zehal_device_t device, uint64_t* host_timestamp,
                                               uint64_t* device_timestamp) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        zehal::hal::Device* d = device_from_handle(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        return d->global_timestamps(host_timestamp, device_timestamp);
    });
}

ze_result_t zehal_event_pool_create(zehal_device_t device, uint32_t flags, uint32_t count, zehal_event_pool_t* pool) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        zehal::hal::Device* d = device_from_handle(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!pool) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<zehal::hal::EventPool> made;
        if (ze_result_t r = d->create_event_pool(count, flags, &made); r != ZE_RESULT_SUCCESS) return r;
        try {
            *pool = reinterpret_cast<zehal_event_pool_t>(
                HandleTable::get().add(zehal::capi::PoolEntry{std::move(made), 0}));
        } catch (const std::bad_alloc&) {
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_event_pool_destroy(zehal_event_pool_t pool) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!pool) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        return HandleTable::get().remove_pool(zehal::capi::id_of(pool));
    });
}

ze_result_t zehal_event_create(zehal_event_pool_t pool, uint32_t index, zehal_event_t* event) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        auto p = zehal::capi::event_pool_from_handle(pool);
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!event) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        zehal::hal::EventRef e;
        if (ze_result_t r = p->event(index, &e); r != ZE_RESULT_SUCCESS) return r;
        uint64_t id = 0;
        try {
            if (ze_result_t r = HandleTable::get().add_event(zehal::capi::id_of(pool), std::move(e), &id);
                r != ZE_RESULT_SUCCESS)
                return r;
        } catch (const std::bad_alloc&) {
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        *event = reinterpret_cast<zehal_event_t>(id);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_event_destroy(zehal_event_t event) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        return HandleTable::get().remove_event(zehal::capi::id_of(event));
    });
}

ze_result_t zehal_event_query_status(zehal_event_t event) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        auto e = event_from_handle(event);
        return e ? e->query() : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    });
}

ze_result_t zehal_event_host_synchronize(zehal_event_t event, uint64_t timeout_ns) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        auto e = event_from_handle(event);
        return e ? e->host_synchronize(timeout_ns) : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    });
}

ze_result_t zehal_event_host_signal(zehal_event_t event) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        auto e = event_from_handle(event);
        return e ? e->host_signal() : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    });
}

ze_result_t zehal_event_host_reset(zehal_event_t event) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        auto e = event_from_handle(event);
        return e ? e->host_reset() : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    });
}

ze_result_t zehal_event_query_kernel_timestamps_ext(zehal_event_t event, uint32_t* count,
                                                    zehal_event_query_kernel_timestamps_results_t* results) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        auto e = event_from_handle(event);
        if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        auto* ticks = results ? reinterpret_cast<zehal::hal::KernelTimestampResult*>(results->kernel_timestamps)
                              : nullptr;
        auto* synced = results ? reinterpret_cast<zehal::hal::KernelTimestampResult*>(results->synchronized_timestamps)
                               : nullptr;
        if (*count != 0 && !ticks && !synced) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // With only synchronized results asked, the synchronized query decides (its pool check).
        if (synced && !ticks) return e->query_synchronized_timestamps(count, synced);
        if (synced && *count != 0) {
            // Both: check the synchronized side can answer before writing anything.
            uint32_t probe = 0;
            if (ze_result_t r = e->query_synchronized_timestamps(&probe, nullptr); r != ZE_RESULT_SUCCESS) return r;
        }
        const uint32_t asked = *count;
        if (ze_result_t r = e->query_kernel_timestamps(count, ticks); r != ZE_RESULT_SUCCESS || !synced || asked == 0)
            return r;
        uint32_t n = *count;
        ze_result_t r = e->query_synchronized_timestamps(&n, synced);
        if (r == ZE_RESULT_SUCCESS && n < *count) *count = n;
        return r;
    });
}

}  // extern "C"
