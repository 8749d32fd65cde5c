// Metric queries: event-based counter windows between two points of a queue
// (zetMetricQueryPool*, zetMetricQuery*, zetCommandListAppendMetricQueryBegin / End).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>

#include "zehal/ze_result.h"
#include "hal/device.hpp"
#include "metrics/metric_group.hpp"

namespace zehal::metrics {

// The queries of one event-based group of a device. Thread-safe; immutable once made.
class QueryPool {
public:
    // A pool of `count` queries of `group` of `device`. INVALID_NULL_HANDLE for a null device
    // or group; INVALID_NULL_POINTER for a null out; INVALID_SIZE for count 0; DEVICE_LOST;
    // INVALID_ARGUMENT for a group of another device or not event-based; UNSUPPORTED_FEATURE
    // for a device without sampled counters.
    static ze_result_t create(const hal::DeviceRef& device, const MetricGroup* group, uint32_t count,
                              std::shared_ptr<QueryPool>* out);

    const MetricGroup& group() const { return *group_; }
    uint32_t count() const { return count_; }
    // The device.
    const hal::DeviceRef& device() const { return device_; }

    // Takes over a use of the device's counters that create() started, and gives it back
    // when destroyed (hal::CounterSource::use).
    QueryPool(const hal::DeviceRef& device, MetricGroupRef group, uint32_t count);
    ~QueryPool();
    QueryPool(const QueryPool&) = delete;
    QueryPool& operator=(const QueryPool&) = delete;

private:
    const hal::DeviceRef device_;  // kept: its counter source is in use until the pool goes
    const MetricGroupRef group_;
    const uint32_t count_;
};

// One query. A queue writes the device's global timestamp into begin_slot() at the query's
// begin and into end_slot() at its end, the end signalling end_event(); the result is the
// group's counters over that window. Every method is thread-safe.
class Query {
public:
    // Query `index` (< the pool's count, else INVALID_ARGUMENT) of `pool`, which it keeps
    // alive. INVALID_NULL_HANDLE for a null pool; INVALID_NULL_POINTER for a null out.
    static ze_result_t create(const std::shared_ptr<QueryPool>& pool, uint32_t index, std::shared_ptr<Query>* out);
    ~Query();
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;

    const QueryPool& pool() const { return *pool_; }
    // Where a queue writes the ticks of the begin and of the end (host memory of the device).
    uint64_t* begin_slot() const { return slots_; }
    uint64_t* end_slot() const { return slots_ + 1; }
    // Signalled by the command that writes the end.
    const hal::EventRef& end_event() const { return end_event_; }
    // Notes that a begin, or an end, was queued.
    void began();
    void ended();

    // Back to the state of a new query (no begin, no end). The caller makes sure no queued
    // begin or end of it is still to run, as for any Level Zero query.
    ze_result_t reset();
    // The query's counter report. *size == 0: *size becomes its size. Else at least that
    // size (else INVALID_SIZE), the report is written and *size set to its size. NOT_READY
    // (size 0) until a begin and an end were queued and the end ran; INVALID_NULL_POINTER
    // for a null size or a null data with a non-zero size.
    ze_result_t get_data(size_t* size, uint8_t* data);

private:
    Query(std::shared_ptr<QueryPool> pool, hal::DeviceRef device, uint64_t* slots, hal::EventRef end_event);

    const std::shared_ptr<QueryPool> pool_;
    const hal::DeviceRef device_;  // frees the slots
    uint64_t* const slots_;        // begin, end
    const hal::EventRef end_event_;
    std::mutex mu_;
    bool began_ = false;
    bool ended_ = false;
};

}  // namespace zehal::metrics
