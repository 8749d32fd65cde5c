// Metric streamers: time-based sampling of a group's counters into a ring of counter
// reports (zetMetricStreamerOpen / ReadData / Close).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/device.hpp"
#include "metrics/metric_group.hpp"

namespace zehal::metrics {

// One open streamer: a sampler thread that appends to a bounded ring one counter report per
// sampling period of device time, the counters of that period (hal::CounterSource). Every
// method is thread-safe.
class Streamer {
public:
    // Sampling periods shorter than this are raised to it.
    static constexpr uint32_t kMinPeriodNs = 10'000;
    // Period used for 0.
    static constexpr uint32_t kDefaultPeriodNs = 1'000'000;
    // Reports the ring holds; notify_every_n_reports is clamped to it.
    static constexpr uint32_t kRingReports = 1u << 16;

    // Opens a streamer on `group` of `device`, sampling every *sampling_period_ns and
    // signalling `notification` (optional) once *notify_every_n_reports reports are
    // readable; both values are corrected (see the constants; notify 0 becomes 1) and
    // written back. Errors, in this order: null device → INVALID_NULL_HANDLE; null
    // out or period or notify → INVALID_NULL_POINTER; a lost device → DEVICE_LOST; null
    // group → INVALID_NULL_HANDLE; a group of another device or not time-based, or an event
    // of another device or of a pool without HOST_VISIBLE → INVALID_ARGUMENT; a device
    // without sampled counters → UNSUPPORTED_FEATURE; a group not activated → NOT_READY; a
    // streamer open on the device → HANDLE_OBJECT_IN_USE.
    static ze_result_t open(const hal::DeviceRef& device, const MetricGroup* group, uint32_t* sampling_period_ns,
                            uint32_t* notify_every_n_reports, const hal::EventRef& notification,
                            std::shared_ptr<Streamer>* out);

    Streamer(const Streamer&) = delete;
    Streamer& operator=(const Streamer&) = delete;
    // Closes the streamer (if not closed yet).
    ~Streamer();

    // Reads up to `max_reports` whole reports. `*size == 0`: *size becomes the bytes that
    // many reports (or all there are) take, nothing is copied. Else copies as many whole
    // reports as fit in *size and sets *size to the bytes written. WARNING_DROPPED_DATA
    // when reports were lost to a full ring since the last read (data returned all the
    // same); INVALID_NULL_POINTER for a null size, or a null data with a non-zero size;
    // INVALID_NULL_HANDLE (size 0) once closed.
    ze_result_t read(uint32_t max_reports, size_t* size, uint8_t* data);
    // Stops sampling and frees the device's streamer slot; later calls answer
    // INVALID_NULL_HANDLE. Reports not read are lost.
    ze_result_t close();
    // Bytes of one report.
    size_t report_size() const { return report_bytes_; }
    // Reports lost to a full ring since open.
    uint64_t dropped() const;

private:
    Streamer(const hal::DeviceRef& device, std::shared_ptr<DeviceMetrics> state, MetricGroupRef group,
             uint32_t period_ns, uint32_t notify, const hal::EventRef& notification);
    // The sampler thread: one report per period until close.
    void sample_loop();
    // Appends the report of (begin, end] to the ring. Caller holds mu_.
    void push_locked(uint64_t begin_ticks, uint64_t end_ticks);
    // Stops and joins the sampler (idempotent).
    void stop();

    std::weak_ptr<hal::Device> device_;
    hal::CounterSource* const source_;
    const std::shared_ptr<DeviceMetrics> state_;
    const MetricGroupRef group_;
    const uint32_t period_ns_;
    const uint32_t notify_;
    const hal::EventRef notification_;
    const size_t report_bytes_;
    const uint64_t timer_hz_;   // ticks per second of the counters' clock
    const uint64_t tick_mask_;  // its valid bits
    uint64_t tick0_ = 0;        // ticks at open: where the first period starts

    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool quit_ = false;
    bool closed_ = false;
    std::vector<uint8_t> ring_;  // kRingReports slots of report_bytes_
    size_t head_ = 0;            // slot of the oldest report
    size_t count_ = 0;           // reports in the ring
    uint32_t sequence_ = 0;      // number of the next report
    uint64_t dropped_ = 0;
    bool dropped_since_read_ = false;
    std::vector<uint64_t> values_;  // scratch for one sample
    std::thread sampler_;
};

}  // namespace zehal::metrics
