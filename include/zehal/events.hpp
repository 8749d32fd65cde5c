// zehal's public C++ API: event pools, events and their kernel timestamps.
#pragma once

#include <zehal/device.hpp>
#include <zehal/error.hpp>
#include <zehal/events.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace zehal {

// What timestamps a pool's events record.
enum class Timestamps : uint32_t {
    none = 0,                                                // no timestamps
    kernel = ZEHAL_EVENT_POOL_FLAG_KERNEL_TIMESTAMP,         // kernel timestamps (device ticks)
    mapped = ZEHAL_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP,  // also synchronized ones (host ns)
};

class EventPool;

// One event of a pool (keeps its pool alive). Move-only; a moved-from Event throws
// INVALID_NULL_HANDLE from every call.
class Event {
public:
    Event(Event&& other) noexcept : pool_(std::move(other.pool_)), event_(std::exchange(other.event_, nullptr)) {}
    Event& operator=(Event&& other) noexcept {
        if (this != &other) {
            release();
            pool_ = std::move(other.pool_);
            event_ = std::exchange(other.event_, nullptr);
        }
        return *this;
    }
    ~Event() { release(); }

    // True once signalled.
    bool query() const {
        const ze_result_t r = zehal_event_query_status(event_);
        if (r == ZE_RESULT_NOT_READY) return false;
        detail::check(r, "zehal::Event::query");
        return true;
    }
    // Waits until signalled or `timeout_ns` passed; false on timeout.
    bool synchronize(uint64_t timeout_ns = ZEHAL_TIMEOUT_INFINITE) const {
        const ze_result_t r = zehal_event_host_synchronize(event_, timeout_ns);
        if (r == ZE_RESULT_NOT_READY) return false;
        detail::check(r, "zehal::Event::synchronize");
        return true;
    }
    // Signals from the host.
    void signal() const { detail::check(zehal_event_host_signal(event_), "zehal::Event::signal"); }
    // Back to "not signalled".
    void reset() const { detail::check(zehal_event_host_reset(event_), "zehal::Event::reset"); }
    // Kernel timestamps of the command that signalled it, one per packet, in device ticks
    // (a `kernel` or `mapped` pool; throws NOT_READY before it is signalled).
    std::vector<zehal_kernel_timestamp_result_t> kernel_timestamps() const { return query_timestamps(false); }
    // The same, synchronized to host ns of CLOCK_MONOTONIC_RAW (a `mapped` pool).
    std::vector<zehal_kernel_timestamp_result_t> synchronized_timestamps() const { return query_timestamps(true); }
    // The C handle, for the C API.
    zehal_event_t handle() const noexcept { return event_; }

private:
    friend class EventPool;
    Event(std::shared_ptr<zehal_event_pool> pool, zehal_event_t event) : pool_(std::move(pool)), event_(event) {}

    // Destroys the event, then lets go of the pool.
    void release() noexcept {
        if (event_) zehal_event_destroy(std::exchange(event_, nullptr));
        pool_.reset();
    }

    std::vector<zehal_kernel_timestamp_result_t> query_timestamps(bool synchronized) const {
        uint32_t count = 0;
        zehal_event_query_kernel_timestamps_results_t results{};
        detail::check(zehal_event_query_kernel_timestamps_ext(event_, &count, &results), "zehal::Event timestamps");
        std::vector<zehal_kernel_timestamp_result_t> out(count);
        (synchronized ? results.synchronized_timestamps : results.kernel_timestamps) = out.data();
        detail::check(zehal_event_query_kernel_timestamps_ext(event_, &count, &results), "zehal::Event timestamps");
        out.resize(count);
        return out;
    }

    std::shared_ptr<zehal_event_pool> pool_;
    zehal_event_t event_;
};

// A pool of host-visible events of one device. Copyable: copies share the pool, which goes
// once its last copy and its last event are gone.
class EventPool {
public:
    EventPool(const Device& device, uint32_t count, Timestamps timestamps = Timestamps::none) {
        zehal_event_pool_t p = nullptr;
        const uint32_t flags = ZEHAL_EVENT_POOL_FLAG_HOST_VISIBLE | static_cast<uint32_t>(timestamps);
        detail::check(zehal_event_pool_create(device.handle(), flags, count, &p), "zehal::EventPool");
        pool_.reset(p, [](zehal_event_pool_t q) { zehal_event_pool_destroy(q); });
    }
    // Event `index` (< count).
    Event event(uint32_t index) const {
        zehal_event_t e = nullptr;
        detail::check(zehal_event_create(pool_.get(), index, &e), "zehal::EventPool::event");
        return Event(pool_, e);
    }

private:
    std::shared_ptr<zehal_event_pool> pool_;
};

// Elapsed ticks from `start` to `end` of a counter with `valid_bits` bits (it may wrap).
constexpr uint64_t elapsed_ticks(uint64_t start, uint64_t end, uint32_t valid_bits) noexcept {
    const uint64_t max = valid_bits >= 64 ? ~0ull : (1ull << valid_bits) - 1;
    return end >= start ? end - start : (max - start) + end + 1;
}

}  // namespace zehal
