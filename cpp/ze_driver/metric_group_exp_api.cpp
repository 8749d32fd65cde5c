// Experimental metric group functions: which groups can be collected together
// (concurrent metric groups) and the metrics' timestamps beside the device's global one.
#include <algorithm>
#include <map>
#include <vector>

#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"
#include "metrics/metric_group.hpp"

namespace zehal::ze_driver {
namespace {

// The group behind a handle: INVALID_NULL_HANDLE for null, INVALID_ARGUMENT for a value that
// is no group of a live device.
ze_result_t group_of(zet_metric_group_handle_t handle, metrics::MetricGroupRef* out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    *out = metrics::DeviceMetrics::find_group(handle);
    return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

// Sets of groups that can be activated together: one group of each domain per set (the
// rule activation enforces), the k-th group of a domain in set k, each set in the order
// the groups were given. The handles are rearranged in place, set after set.
ze_result_t zetDeviceGetConcurrentMetricGroupsExp_(zet_device_handle_t hDevice, uint32_t metricGroupCount,
                                                   zet_metric_group_handle_t* phMetricGroups,
                                                   uint32_t* pMetricGroupsCountPerConcurrentGroup,
                                                   uint32_t* pConcurrentGroupCount) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!phMetricGroups || !pConcurrentGroupCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<std::vector<zet_metric_group_handle_t>> sets;
        std::map<uint32_t, size_t> seen_per_domain;
        for (uint32_t i = 0; i < metricGroupCount; ++i) {
            metrics::MetricGroupRef g;
            if (ze_result_t r = group_of(phMetricGroups[i], &g); r != ZE_RESULT_SUCCESS) return r;
            if (g->owner().device() != d->device) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
            const size_t set = seen_per_domain[g->info().domain]++;
            if (set == sets.size()) sets.emplace_back();
            sets[set].push_back(phMetricGroups[i]);
        }
        const auto count = static_cast<uint32_t>(sets.size());
        if (!pMetricGroupsCountPerConcurrentGroup) {
            *pConcurrentGroupCount = count;
            return ZE_RESULT_SUCCESS;
        }
        if (*pConcurrentGroupCount < count) return ZE_RESULT_ERROR_INVALID_SIZE;
        *pConcurrentGroupCount = count;
        uint32_t next = 0;
        for (uint32_t s = 0; s < count; ++s) {
            pMetricGroupsCountPerConcurrentGroup[s] = static_cast<uint32_t>(sets[s].size());
            for (zet_metric_group_handle_t h : sets[s]) phMetricGroups[next++] = h;
        }
        return ZE_RESULT_SUCCESS;
    });
}

// The metric timestamp of a tracer-based group at host time `host_ns`: its decoded entries
// are stamped in host ns (CLOCK_MONOTONIC_RAW, contract 5.4), so that is its clock. Beside
// the device's ticks it is counted in periods of the device timer as Level Zero programs
// compute the period, in whole ns (1e9 / timerResolution, the 1.0 properties' value), so
// that (metric - global) x that period is the offset from device time to entry time: the
// host clock is large (the machine's uptime), and an exact fractional period would put the
// result off by the uptime times the rounding.
uint64_t tracer_timestamp(uint64_t host_ns, uint64_t timer_hz, bool synchronized_with_host) {
    if (synchronized_with_host || timer_hz == 0) return host_ns;
    return host_ns / std::max<uint64_t>(1, 1'000'000'000u / timer_hz);
}

// The device's global timestamp (host ns when synchronizedWithHost, else device ticks) and
// the group's metric timestamp, sampled together: for a tracer-based group the clock of
// its decoded entries (tracer_timestamp), for other groups the device timer's ticks, which
// stamp their reports.
ze_result_t zetMetricGroupGetGlobalTimestampsExp_(zet_metric_group_handle_t hMetricGroup,
                                                  ze_bool_t synchronizedWithHost, uint64_t* globalTimestamp,
                                                  uint64_t* metricTimestamp) {
    return ze_guarded([&] {
        metrics::MetricGroupRef g;
        if (ze_result_t r = group_of(hMetricGroup, &g); r != ZE_RESULT_SUCCESS) return r;
        if (!globalTimestamp || !metricTimestamp) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::DeviceRef device = g->owner().device();
        if (!device) return ZE_RESULT_ERROR_DEVICE_LOST;
        uint64_t host_ns = 0, ticks = 0;
        if (ze_result_t r = device->global_timestamps(&host_ns, &ticks); r != ZE_RESULT_SUCCESS) return r;
        *globalTimestamp = synchronizedWithHost ? host_ns : ticks;
        *metricTimestamp = g->tracer_based()
                               ? tracer_timestamp(host_ns, device->properties().timer_hz, synchronizedWithHost)
                               : ticks;
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zetDeviceGetConcurrentMetricGroupsExp, zetDeviceGetConcurrentMetricGroupsExp_),
    ZEHAL_ENTRY(zetMetricGroupGetGlobalTimestampsExp, zetMetricGroupGetGlobalTimestampsExp_),
};

}  // namespace

std::span<const Entry> metric_group_exp_entries() { return kEntries; }

}  // namespace zehal::ze_driver
