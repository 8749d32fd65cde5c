// A device's sampled counters: the values of its event- and time-based metric groups over a
// window of device time (metric queries and streamers read them; tracers do not).
#pragma once

#include <cstdint>
#include <span>

#include "zehal/ze_result.h"

namespace zehal::hal {

// Thread-safe. Ticks are those of Device::global_timestamps (masked to the device's
// timestamp valid bits), so a timestamp a queue wrote in queue order names a point of the
// counters' history.
class CounterSource {
public:
    virtual ~CounterSource() = default;

    // Device ticks now.
    virtual uint64_t now_ticks() const = 0;
    // The values of the metrics of group `group` (index in Device::metric_groups()) over the
    // device time (begin_ticks, end_ticks]: one word per counted metric (every metric but a
    // trailing StreamMarker, hal::counted_metrics), in the group's order, holding a value of
    // the metric's result type (integers as they are, fp32 and fp64 as their bit patterns in
    // the low bits). INVALID_ARGUMENT for a group the source does not count or `values` not of
    // the group's counted metric count.
    virtual ze_result_t window(uint32_t group, uint64_t begin_ticks, uint64_t end_ticks,
                               std::span<uint64_t> values) const = 0;
    // A streamer or query pool starts (`true`) or stops (`false`) reading the counters: while
    // any does, a backend may spend time keeping commands and timestamps on distinct ticks,
    // so that each command falls on the right side of a query's begin and end. A start
    // fails (UNSUPPORTED_FEATURE, DEPENDENCY_UNAVAILABLE) when the device's counters cannot
    // be read now; a stop follows a successful start.
    virtual ze_result_t use(bool reading) = 0;
};

}  // namespace zehal::hal
