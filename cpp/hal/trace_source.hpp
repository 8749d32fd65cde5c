// A backend's stream of asynchronous hardware events: the "hardware buffer" side of a tracer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "zehal/ze_result.h"

namespace zehal::hal {

// Written by the device (its engines, its asynchronous sources), drained by one tracer's
// drain thread. The buffer is bounded: when nobody drains it, new records are dropped
// and counted. Records are hal::TraceRecord values with device-wide metric ids.
class TraceSource {
public:
    virtual ~TraceSource() = default;

    // Starts producing records for the metric groups with these indices (in the device's
    // metric_groups()); empties the buffer and zeroes the counters.
    virtual ze_result_t start(std::span<const uint32_t> groups) = 0;
    // Stops producing; records already in the buffer stay drainable.
    virtual ze_result_t stop() = 0;
    // Moves whole records into `dst` (at most `capacity` bytes); returns the bytes moved
    // and adds to *lost the records dropped since the last drain, before these ones.
    // Called by one thread at a time.
    virtual size_t drain(void* dst, size_t capacity, uint64_t* lost) = 0;
    // Records produced since start(), dropped ones included.
    virtual uint64_t produced() const = 0;
    // Capacity of the hardware buffer in bytes.
    virtual size_t capacity() const = 0;
};

}  // namespace zehal::hal
