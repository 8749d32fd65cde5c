// The metric decoder (contract §5.4): raw tracer records to metric entries in sets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "zehal/ze_result.h"
#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"

namespace zehal::metrics {

// One decoded entry, laid out as Level Zero's zet_metric_entry_exp_t.
struct MetricEntry {
    uint64_t value;         // raw bits, typed by the metric's result type
    uint64_t timestamp;     // host ns of CLOCK_MONOTONIC_RAW
    uint32_t metric_index;  // index in the metrics passed to decode
    uint8_t on_subdevice;   // 1 when made on a sub-device
    uint32_t subdevice_id;  // the sub-device (its set) when on_subdevice, else 0
};
static_assert(sizeof(MetricEntry) == 32 && offsetof(MetricEntry, metric_index) == 16 &&
                  offsetof(MetricEntry, on_subdevice) == 20 && offsetof(MetricEntry, subdevice_id) == 24,
              "zet_metric_entry_exp_t layout");

// Thread-safe. Usable after its tracer is destroyed. After destroy(), every call returns
// INVALID_NULL_HANDLE.
class Decoder {
public:
    // A decoder of `tracer`'s raw data. INVALID_NULL_HANDLE for a null or destroyed tracer;
    // INVALID_NULL_POINTER for a null out.
    static ze_result_t create(const std::shared_ptr<Tracer>& tracer, std::shared_ptr<Decoder>* out);

    // Ends the decoder; INVALID_NULL_HANDLE when done twice.
    ze_result_t destroy();
    bool closed() const;

    // Decodable metrics: *count 0 → the total; smaller → the first *count; larger →
    // corrected to the total, extra slots untouched. `out` may be null only with *count 0.
    ze_result_t decodable_metrics(uint32_t* count, const Metric** out) const;
    // The decodable metrics as handles (empty once destroyed).
    std::vector<MetricRef> metrics() const;
    // Number of entry sets: one per sub-device, one on a device without sub-devices.
    uint32_t sets() const { return sets_; }

    // Decodes `*raw_size` bytes of `raw` for `metrics` (empty: every decodable metric;
    // each must be decodable, once). Counting: when *set_count or *entry_count is 0, the
    // zero ones become the totals (sets, entries in the whole data) and `entries_per_set`,
    // if given, gets per-set totals for min(*set_count, sets) sets; nothing else is
    // written. Decoding: up to *entry_count entries, in raw order, laid out set by set;
    // *entry_count becomes the number decoded, *set_count is corrected down to the sets,
    // `entries_per_set` (optional) gets each set's count, and *raw_size becomes the bytes
    // consumed. Timestamps come from the clock-sync records (the last one seen by an
    // earlier decode carries over). INVALID_ARGUMENT for truncated or corrupt data, after
    // decoding the whole records before it. *raw_size 0 (raw may be null) is no data: no
    // entries, every set empty, nothing consumed.
    ze_result_t decode(size_t* raw_size, const void* raw, std::span<const Metric* const> metrics, uint32_t* set_count,
                       uint32_t* entries_per_set, uint32_t* entry_count, MetricEntry* entries);

    // A clock reference: host ns at device `ticks`.
    struct Sync {
        uint64_t host_ns = 0;
        uint64_t ticks = 0;
        bool valid = false;
    };

private:
    Decoder(std::vector<MetricRef> metrics, const hal::DeviceProperties& props, Sync start);
    // The first step of decode(): `metrics` (empty: all) as decodable index -> position in
    // the subset (0xFFFFFFFF for the others), and the clock reference to start from.
    ze_result_t select(std::span<const Metric* const> metrics, std::vector<uint32_t>* selected, Sync* start) const;

    std::vector<MetricRef> metrics_;
    const uint32_t sets_;
    const uint32_t subdevices_;
    const uint64_t timer_hz_;
    const uint64_t tick_mask_;

    mutable std::mutex mu_;
    Sync sync_;
    bool closed_ = false;
};

}  // namespace zehal::metrics
