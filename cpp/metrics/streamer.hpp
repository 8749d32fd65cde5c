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
#include "metrics/notification.hpp"

namespace zehal::metrics {

// One open streamer: a sampler thread that appends to a bounded ring one counter report per
// sampling period of device time, the counters of that period (hal::CounterSource), split at
// the markers whose timestamps landed in it. Every method is thread-safe.
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
    // check_notification refuses → INVALID_ARGUMENT; a device without sampled counters →
    // UNSUPPORTED_FEATURE; a group not activated → NOT_READY; a streamer open on the device →
    // HANDLE_OBJECT_IN_USE; the counters' start refused (hal::CounterSource::use) → its
    // error, with the device's streamer slot left free.
    static ze_result_t open(const hal::DeviceRef& device, const MetricGroup* group, uint32_t* sampling_period_ns,
                            uint32_t* notify_every_n_reports, const Notification& notification,
                            std::shared_ptr<Streamer>* out);

    Streamer(const Streamer&) = delete;
    Streamer& operator=(const Streamer&) = delete;
    // Closes the streamer (if not closed yet).
    ~Streamer();

    // Reads up to `max_reports` whole reports. While markers are pending it first writes the
    // reports that ended by now, as many as it can take, so the first read after a marker's
    // command ran has its report. `*size == 0`: *size
    // becomes the bytes that many reports (or all there are) take, nothing is copied. Else
    // copies as many whole reports as fit in *size and sets *size to the bytes written.
    // WARNING_DROPPED_DATA when reports were lost to a full ring since the last read (data
    // returned all the same); INVALID_NULL_POINTER for a null size, or a null data with a
    // non-zero size; INVALID_NULL_HANDLE (size 0) once closed.
    ze_result_t read(uint32_t max_reports, size_t* size, uint8_t* data);
    // Stops sampling and frees the device's streamer slot, then gives the marker slots back
    // once the commands writing them ran; later calls answer INVALID_NULL_HANDLE. Reports not
    // read are lost.
    ze_result_t close();
    // Where a marker's command writes the device's global timestamp (host memory of the
    // device, owned by the streamer), and the event it signals once written.
    struct MarkerSlot {
        uint64_t* ticks = nullptr;
        hal::EventRef landed;
    };
    // SUCCESS when markers can be added: UNSUPPORTED_FEATURE for a group without the
    // StreamMarker metric; INVALID_NULL_HANDLE once closed.
    ze_result_t can_mark() const;
    // Registers a marker of `value` (zetCommandListAppendMetricStreamerMarker): *slot is where
    // its command is to write the device's global timestamp, in queue order, then signal
    // `slot->landed`. Once that event is signalled, the report that ends at the timestamp
    // carries `value` in the StreamMarker metric, and the report after it starts there; the
    // slot then serves another marker. A command that runs more than once (a regular list's)
    // adds a marker each time it runs. INVALID_NULL_POINTER for a null slot; the errors of
    // can_mark(); OUT_OF_HOST_MEMORY (or the device's error) when no slot can be made.
    ze_result_t add_marker(uint32_t value, MarkerSlot* slot);
    // Forgets the marker of `slot` (add_marker) whose command could not be queued.
    void drop_marker(const MarkerSlot& slot);
    // The device it samples (null once gone).
    hal::DeviceRef device() const { return device_.lock(); }
    // Bytes of one report.
    size_t report_size() const { return report_bytes_; }
    // Reports lost to a full ring since open.
    uint64_t dropped() const;

private:
    Streamer(const hal::DeviceRef& device, std::shared_ptr<DeviceMetrics> state, MetricGroupRef group,
             uint32_t period_ns, uint32_t notify, const hal::EventRef& notification);
    // A marker appended and not yet shown: its slot's index (chunk, then place in it).
    struct Marker {
        uint32_t value;
        size_t slot;
    };
    // A marker whose timestamp landed: where it ends a report (ticks since open).
    struct Landed {
        uint64_t at;
        uint32_t value;
    };
    // Marker slots of one allocation of host memory, each with its event.
    struct Chunk {
        uint64_t* ticks;
        std::shared_ptr<hal::EventPool> events;
    };
    // Marker slots per chunk.
    static constexpr uint32_t kSlotsPerChunk = 512;

    // The sampler thread: one report per period until close.
    void sample_loop();
    // Writes the reports of the periods that ended before `elapsed` (ticks since open), at
    // most `limit` of them, split at the markers that landed in them; then, once every such
    // period is written, the reports ending at the markers that landed in the period under
    // way. Caller holds mu_.
    void write_due_locked(uint64_t elapsed, uint64_t limit = UINT64_MAX);
    // Moves the markers that landed at or before `until` (ticks since open) out of markers_,
    // in tick order, then append order, and frees their slots. Caller holds mu_.
    std::vector<Landed> take_landed_locked(uint64_t until);
    // Appends the report of (begin, end] (ticks since open) with StreamMarker `marker` to the
    // ring. Caller holds mu_.
    void push_locked(uint64_t begin, uint64_t end, uint32_t marker);
    // Stops and joins the sampler (idempotent).
    void stop();
    // Slot `index`: its ticks and its event.
    MarkerSlot slot_locked(size_t index) const;
    // Gives the marker slots' memory back to the device.
    void free_slots();

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
    const size_t counted_;      // metrics the counter source fills (all but StreamMarker)
    const bool has_marker_;     // the group ends with the StreamMarker metric
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
    uint64_t written_ = 0;          // periods written
    uint64_t cursor_ = 0;           // where the last report written ends (ticks since open)
    std::vector<Marker> markers_;   // in append order
    std::vector<size_t> free_;      // slots no marker uses
    std::vector<Chunk> chunks_;     // where the slots are
    std::thread sampler_;
};

}  // namespace zehal::metrics
