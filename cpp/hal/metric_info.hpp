// Metric groups and metrics a device offers, as plain data (contract §4).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "zehal/ze_result.h"

namespace zehal::hal {

// Sampling type flags of a metric group.
enum SamplingType : uint32_t {
    kSamplingEventBased = 1u << 0,
    kSamplingTimeBased = 1u << 1,
    kSamplingTracerBased = 1u << 2,
};

// Metric group type flags (zet_metric_group_type_exp_flags_t).
enum GroupType : uint32_t {
    kGroupExportDmaBuf = 1u << 0,
    kGroupUserCreated = 1u << 1,
    kGroupOther = 1u << 2,
    kGroupMarker = 1u << 3,
};

// Result types of a metric's values (zet_value_type_t).
enum ResultType : uint32_t { kUint32 = 0, kUint64 = 1, kFp32 = 2, kFp64 = 3, kBool8 = 4 };

// Metric types (zet_metric_type_t), experimental ones with the values of headers >= 1.11.5.
enum MetricType : uint32_t {
    kMetricDuration = 0,
    kMetricEvent = 1,
    kMetricEventWithRange = 2,
    kMetricThroughput = 3,
    kMetricTimestamp = 4,
    kMetricFlag = 5,
    kMetricRatio = 6,
    kMetricRaw = 7,
    kMetricEventExpTimestamp = 0x7ffffff9,
    kMetricEventExpStart = 0x7ffffffa,
    kMetricEventExpEnd = 0x7ffffffb,
    kMetricEventExpMonotonicWrapsValue = 0x7ffffffc,
    kMetricExpExportDmaBuf = 0x7ffffffd,
    kMetricIpExp = 0x7ffffffe,
};

// One metric of a group.
struct MetricInfo {
    std::string name;
    std::string description;
    std::string component;
    uint32_t tier = 1;
    uint32_t metric_type = kMetricEvent;
    uint32_t result_type = kUint64;
    std::string units;
};

// A tier-1 metric with these properties (the backends' metric tables are lists of these).
inline MetricInfo make_metric(std::string name, std::string description, std::string component, uint32_t type,
                              uint32_t result, std::string units) {
    MetricInfo m;
    m.name = std::move(name);
    m.description = std::move(description);
    m.component = std::move(component);
    m.metric_type = type;
    m.result_type = result;
    m.units = std::move(units);
    return m;
}

// One metric group. `first_metric_id` numbers its metrics device-wide: a hardware trace
// record carries `first_metric_id + i` for metric i of this group.
struct MetricGroupInfo {
    std::string name;
    std::string description;
    uint32_t sampling_types = 0;  // SamplingType bits
    uint32_t type_flags = 0;      // GroupType bits
    uint32_t domain = 0;
    uint32_t first_metric_id = 0;
    std::vector<MetricInfo> metrics;
};

// The group every backend with a tracer offers for metric export memory: tracer-based and
// EXPORT_DMA_BUF; metric 0 (id `first_metric_id`) is the kind-6 record of a device write
// into the exported memory, metric 1 the memory itself (type EXP_EXPORT_DMA_BUF).
inline MetricGroupInfo export_memory_group(uint32_t domain, uint32_t first_metric_id) {
    return {
        .name = "ExportMemory",
        .description = "Writes by device commands into the group's exported memory",
        .sampling_types = kSamplingTracerBased,
        .type_flags = kGroupExportDmaBuf,
        .domain = domain,
        .first_metric_id = first_metric_id,
        .metrics =
            {
                make_metric("ExportWrite",
                            "A device command wrote into the exported memory; value: first 32-bit word written",
                            "export", kMetricEvent, kUint32, ""),
                make_metric("ExportMemory", "The exported memory itself (dma-buf fd and size)", "export",
                            kMetricExpExportDmaBuf, kUint64, "bytes"),
            },
    };
}

// The group every backend's trace source offers for its commands: tracer-based, seven
// records per command in this order (ids from `first_metric_id`): start and end (value: the
// command's id), bytes written, engine ordinal, engine index, queue, command type (0 copy,
// 1 fill, 2 barrier, 3 kernel). A backend may append metrics of its own after them.
inline MetricGroupInfo engine_events_group(std::string description, uint32_t first_metric_id) {
    return {
        .name = "EngineEvents",
        .description = std::move(description),
        .sampling_types = kSamplingTracerBased,
        .type_flags = kGroupOther,
        .domain = 0,
        .first_metric_id = first_metric_id,
        .metrics =
            {
                make_metric("CommandStart", "A command started on its engine; value: the command's id", "engine",
                            kMetricEventExpStart, kUint64, ""),
                make_metric("CommandEnd", "A command completed on its engine; value: the command's id", "engine",
                            kMetricEventExpEnd, kUint64, ""),
                make_metric("BytesMoved", "Bytes the command wrote (0 for kernels)", "engine", kMetricEvent, kUint64,
                            "bytes"),
                make_metric("EngineOrdinal", "Engine group of the command (0 compute, 1 copy)", "engine", kMetricRaw,
                            kUint32, ""),
                make_metric("EngineIndex", "Engine of the command inside its group", "engine", kMetricRaw, kUint32, ""),
                make_metric("QueueId", "Number of the command's queue (a CUDA stream id on CUDA)", "engine", kMetricRaw,
                            kUint64, ""),
                make_metric("CommandType", "Kind of command (0 copy, 1 fill, 2 barrier, 3 kernel)", "engine",
                            kMetricRaw, kUint32, ""),
            },
    };
}

// Name of the metric that carries metric streamer markers (zetCommandListAppendMetricStreamerMarker).
inline constexpr std::string_view kStreamMarkerName = "StreamMarker";

// Appends the StreamMarker metric to time-based group `group`, as its last metric: in a
// streamer's report, the value of the marker whose timestamp ends that report, else 0 (0 in
// every query report too). The metrics layer fills it; a CounterSource fills the metrics
// before it (counted_metrics). Any backend's time-based group can carry it.
inline void add_stream_marker(MetricGroupInfo* group) {
    group->metrics.push_back(make_metric(std::string(kStreamMarkerName),
                                         "Value of the streamer marker appended where this report ends, else 0",
                                         "marker", kMetricRaw, kUint32, ""));
}

// Whether `group`'s last metric is the StreamMarker metric (add_stream_marker).
inline bool has_stream_marker(const MetricGroupInfo& group) {
    return !group.metrics.empty() && group.metrics.back().name == kStreamMarkerName;
}

// Metrics of `group` a CounterSource fills: every one but a trailing StreamMarker.
inline size_t counted_metrics(const MetricGroupInfo& group) {
    return group.metrics.size() - (has_stream_marker(group) ? 1 : 0);
}

// The bit mask (bit i for group i) of `groups`, indices into `all` that a trace source is
// asked to start: INVALID_SIZE when empty, INVALID_ARGUMENT for an index out of range or
// a group that is not tracer-based. A TraceSource::start of every backend begins with it.
inline ze_result_t tracer_group_mask(std::span<const uint32_t> groups, const std::vector<MetricGroupInfo>& all,
                                     uint32_t* mask) {
    if (groups.empty()) return ZE_RESULT_ERROR_INVALID_SIZE;
    uint32_t bits = 0;
    for (uint32_t g : groups) {
        if (g >= all.size() || g >= 32 || !(all[g].sampling_types & kSamplingTracerBased))
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        bits |= 1u << g;
    }
    *mask = bits;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::hal
