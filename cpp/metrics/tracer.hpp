// The metric tracer (contract §5): one drain thread moves the device's hardware trace
// records into a lock-free host ring that read() empties.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "zehal/ze_result.h"
#include "common/spsc_ring.hpp"
#include "hal/device.hpp"
#include "hal/trace_record.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/notification.hpp"

namespace zehal::metrics {

// Settings of a tracer beyond Level Zero's descriptor.
struct TracerOptions {
    size_t ring_bytes = 4u << 20;  // host ring capacity, rounded up to a power of two
};

// Every method is thread-safe. After destroy(), every call returns INVALID_NULL_HANDLE.
class Tracer {
public:
    // notify_every_n_bytes used when 0 is asked for (clamped to the ring like any value).
    static constexpr uint32_t kDefaultNotifyBytes = 64u << 10;

    // Creates a disabled tracer of `groups` on `device`. `*notify_every_n_bytes` (null
    // means 0) is rounded up to whole records, clamped to the ring capacity, 0 replaced by
    // the default, and the value used written back. `notification` (may be null) must
    // come from a host-visible pool of the device, or of a pool made for it
    // (check_notification). INVALID_NULL_HANDLE: null device or group;
    // INVALID_NULL_POINTER: null out; INVALID_SIZE: no group; INVALID_ARGUMENT: a group of
    // another device, not tracer-based or given twice, a notification event that
    // check_notification refuses, a ring under two records; UNSUPPORTED_FEATURE: no tracer
    // on the device; NOT_READY: a group not activated; HANDLE_OBJECT_IN_USE: the device has
    // a tracer; DEVICE_LOST: the device was lost.
    static ze_result_t create(const hal::DeviceRef& device, std::span<const MetricGroup* const> groups,
                              uint32_t* notify_every_n_bytes, const Notification& notification,
                              std::shared_ptr<Tracer>* out, const TracerOptions& options = {});

    Tracer(const Tracer&) = delete;
    Tracer& operator=(const Tracer&) = delete;
    // Stops the drain thread (and the hardware source, if still enabled) and frees the
    // device's tracer slot when destroy() was not called.
    ~Tracer();

    // Ends the tracer: HANDLE_OBJECT_IN_USE while enabled; INVALID_NULL_HANDLE when done twice.
    ze_result_t destroy();
    // Starts tracing. Synchronous: returns once enabled (or the error of starting, e.g.
    // DEVICE_LOST); asynchronous: returns at once, reads show the change shortly after.
    // Enabling an enabled tracer changes nothing.
    ze_result_t enable(bool synchronous);
    // Stops tracing; the data gathered stays readable. Synchronous: returns once the
    // hardware buffer is drained into the ring and the disable marker is queued.
    ze_result_t disable(bool synchronous);
    // Reads whole records (contract §5.2): *size 0 asks for the bytes available; else up
    // to *size bytes of whole records are copied and *size becomes the bytes written.
    // NOT_READY (size 0) when never enabled, or disabled and drained;
    // WARNING_DROPPED_DATA when records were lost since the last read. A read sees every
    // enable or disable requested before it and every record the device wrote before it:
    // it waits for one pass of the drain thread that starts after the call.
    ze_result_t read(size_t* size, void* data);

    // Whether enable was the last request (the drain thread may still be applying it).
    bool enabled() const;
    // Whether destroy() was called.
    bool closed() const { return closed_.load(std::memory_order_acquire); }
    // Bytes readable now (whole records).
    size_t available() const;
    // Records lost so far, in the hardware buffer and in the ring.
    uint64_t dropped() const { return dropped_.load(std::memory_order_acquire); }
    // The notify_every_n_bytes in use.
    uint32_t notify_every_n_bytes() const { return notify_bytes_; }
    // Capacity of the host ring in bytes.
    size_t ring_capacity() const { return ring_.capacity(); }
    // The device traced.
    const hal::DeviceRef& device() const { return device_; }
    // Metrics the raw data refers to by index: every metric of every group, in the
    // order the groups were given.
    const std::vector<MetricRef>& decodable_metrics() const { return metrics_; }

private:
    enum State : int { kNever = 0, kEnabled = 1, kDisabled = 2 };
    struct RingWriter;

    Tracer(const hal::DeviceRef& device, std::shared_ptr<DeviceMetrics> state, std::vector<uint32_t> groups,
           std::vector<MetricRef> metrics, uint32_t notify_bytes, hal::EventRef notification, size_t ring_bytes);

    ze_result_t request(bool enable, bool synchronous);
    void run();
    ze_result_t apply(bool enable);
    size_t pump();
    uint64_t remap(hal::TraceRecord& r) const;
    uint64_t fix_up(std::span<hal::TraceRecord> records);
    void discard_source();
    void flush(RingWriter& w);
    void flush();
    void queue(const hal::TraceRecord& r);
    void note_lost(uint64_t records);
    void maybe_sync(bool force);
    void maybe_notify();
    void publish_pending();
    void stop_thread();
    void catch_up();

    // Fixed at creation.
    const hal::DeviceRef device_;
    const std::shared_ptr<DeviceMetrics> state_;
    hal::TraceSource* const source_;
    const std::vector<uint32_t> groups_;    // group indices on the device
    const std::vector<MetricRef> metrics_;  // decodable metrics
    std::vector<uint32_t> index_of_;        // device-wide metric id -> decodable index
    const uint32_t notify_bytes_;
    const hal::EventRef notification_;
    uint64_t sync_interval_ns_ = 0;
    SpscByteRing ring_;
    const size_t source_records_;  // records the hardware buffer holds

    // Requests, under mu_.
    mutable std::mutex mu_;
    std::condition_variable wake_;  // the drain thread
    std::condition_variable done_;  // synchronous enable and disable, readers' drain passes
    bool desired_ = false;
    uint64_t requested_ = 0;  // generation of the last request
    uint64_t applied_ = 0;    // generation the drain thread applied last
    ze_result_t applied_result_ = ZE_RESULT_SUCCESS;
    uint64_t passes_asked_ = 0;  // drain passes readers asked for (catch_up)
    uint64_t passes_done_ = 0;   // the last of them a finished pass answered
    bool quit_ = false;

    // Published by the drain thread.
    std::atomic<int> state_now_{kNever};
    std::atomic<uint64_t> dropped_{0};
    std::atomic<size_t> pending_{0};  // records queued outside the ring, waiting for space
    std::atomic<bool> closed_{false};

    // Reader side, under read_mu_ (read() is the ring's one consumer at a time).
    std::mutex read_mu_;
    uint64_t dropped_seen_ = 0;

    // Drain thread only.
    std::deque<hal::TraceRecord> control_;  // control records (and losses) not yet in the ring
    uint32_t sequence_ = 0;
    uint64_t last_sync_ns_ = 0;
    uint64_t last_ticks_ = 0;
    uint64_t last_pump_ns_ = 0;  // when the previous pump started
    uint64_t taken_ = 0;         // records drained or reported lost since start()
    bool ring_full_ =
        false;  // the last pump stopped for want of room in the ring  // since when the ring has had no room (0: it has room)

    std::thread thread_;
};

}  // namespace zehal::metrics
