// Metrics from Python: the constants, MetricGroup, Metric, activate_metric_groups.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "hal/trace_record.hpp"
#include "metrics/decoder.hpp"
#include "metrics/metric_export.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/metric_objects.hpp"

namespace zehal::py {
namespace {

std::vector<PyMetric> group_metrics(const PyMetricGroup& g) {
    std::vector<PyMetric> out;
    for (const metrics::Metric& m : g.group->metrics()) {
        // Aliasing handles: each metric keeps its group's handle (and so the device) alive.
        out.push_back({metrics::MetricRef(g.group, &m)});
    }
    return out;
}

pyb::tuple export_of_group(const PyMetricGroup& g) {
    int fd = -1;
    size_t size = 0;
    check(metrics::export_dma_buf(*g.group, &fd, &size), "MetricGroup.export_dma_buf");
    return pyb::make_tuple(fd, size);
}

pyb::tuple export_of_metric(const PyMetric& m) {
    int fd = -1;
    size_t size = 0;
    check(metrics::export_dma_buf(*m.metric, &fd, &size), "Metric.export_dma_buf");
    return pyb::make_tuple(fd, size);
}

void bind_constants(pyb::module_& m) {
    const std::pair<const char*, uint32_t> constants[] = {
        {"SAMPLING_TYPE_EVENT_BASED", hal::kSamplingEventBased},
        {"SAMPLING_TYPE_TIME_BASED", hal::kSamplingTimeBased},
        {"SAMPLING_TYPE_TRACER_BASED", hal::kSamplingTracerBased},
        {"GROUP_TYPE_EXPORT_DMA_BUF", hal::kGroupExportDmaBuf},
        {"GROUP_TYPE_USER_CREATED", hal::kGroupUserCreated},
        {"GROUP_TYPE_OTHER", hal::kGroupOther},
        {"GROUP_TYPE_MARKER", hal::kGroupMarker},
        {"VALUE_TYPE_UINT32", hal::kUint32},
        {"VALUE_TYPE_UINT64", hal::kUint64},
        {"VALUE_TYPE_FP32", hal::kFp32},
        {"VALUE_TYPE_FP64", hal::kFp64},
        {"VALUE_TYPE_BOOL8", hal::kBool8},
        {"METRIC_TYPE_DURATION", hal::kMetricDuration},
        {"METRIC_TYPE_EVENT", hal::kMetricEvent},
        {"METRIC_TYPE_EVENT_WITH_RANGE", hal::kMetricEventWithRange},
        {"METRIC_TYPE_THROUGHPUT", hal::kMetricThroughput},
        {"METRIC_TYPE_TIMESTAMP", hal::kMetricTimestamp},
        {"METRIC_TYPE_FLAG", hal::kMetricFlag},
        {"METRIC_TYPE_RATIO", hal::kMetricRatio},
        {"METRIC_TYPE_RAW", hal::kMetricRaw},
        {"METRIC_TYPE_EVENT_EXP_TIMESTAMP", hal::kMetricEventExpTimestamp},
        {"METRIC_TYPE_EVENT_EXP_START", hal::kMetricEventExpStart},
        {"METRIC_TYPE_EVENT_EXP_END", hal::kMetricEventExpEnd},
        {"METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE", hal::kMetricEventExpMonotonicWrapsValue},
        {"METRIC_TYPE_EXP_EXPORT_DMA_BUF", hal::kMetricExpExportDmaBuf},
        {"METRIC_TYPE_IP_EXP", hal::kMetricIpExp},
        {"RECORD_SAMPLE", hal::kRecordSample},
        {"RECORD_ENABLE", hal::kRecordEnable},
        {"RECORD_DISABLE", hal::kRecordDisable},
        {"RECORD_DROPPED", hal::kRecordDropped},
        {"RECORD_CLOCK_SYNC", hal::kRecordClockSync},
        {"RECORD_EXPORT_WRITE", hal::kRecordExportWrite},
        {"RECORD_SIZE", static_cast<uint32_t>(sizeof(hal::TraceRecord))},
        {"ROOT_DEVICE", hal::kRootDevice},
    };
    for (const auto& [name, value] : constants) m.attr(name) = value;
}

void bind_groups(pyb::module_& m) {
    auto group = pyb::class_<PyMetricGroup>(m, "MetricGroup",
                                            "A metric group of a device (its handle keeps the device alive).")
                     .def_property_readonly(
                         "name", [](const PyMetricGroup& g) { return g.group->info().name; }, "Short name.")
                     .def_property_readonly(
                         "description", [](const PyMetricGroup& g) { return g.group->info().description; },
                         "What it measures.")
                     .def_property_readonly(
                         "sampling_types", [](const PyMetricGroup& g) { return g.group->info().sampling_types; },
                         "Sampling type bits: EVENT_BASED 1, TIME_BASED 2, TRACER_BASED 4.")
                     .def_property_readonly(
                         "type_flags", [](const PyMetricGroup& g) { return g.group->info().type_flags; },
                         "Group type bits: EXPORT_DMA_BUF 1, USER_CREATED 2, OTHER 4, MARKER 8.")
                     .def_property_readonly(
                         "domain", [](const PyMetricGroup& g) { return g.group->info().domain; },
                         "Domain: one activated group per domain.")
                     .def_property_readonly("metrics", &group_metrics, "Its metrics, in order (a list of Metric).")
                     .def_property_readonly(
                         "tracer_based", [](const PyMetricGroup& g) { return g.group->tracer_based(); },
                         "True when a MetricTracer can trace it.")
                     .def_property_readonly(
                         "device", [](const PyMetricGroup& g) { return g.group->owner().device(); }, "The device.")
                     .def("export_dma_buf", &export_of_group,
                          "(fd, size) of the group's exported memory (groups with EXPORT_DMA_BUF; InvalidArgumentError "
                          "for the others). The fd belongs to the group: do not close it; os.dup() it to keep it.")
                     .def("__eq__",
                          [](const PyMetricGroup& a, pyb::object b) {
                              const PyMetricGroup* other = instance_of<PyMetricGroup>(b.ptr());
                              return other && a.group.get() == other->group.get();
                          })
                     .def("__hash__", [](const PyMetricGroup& g) { return std::hash<const void*>{}(g.group.get()); })
                     .def("__repr__", [](const PyMetricGroup& g) {
                         return "<zehal.MetricGroup " + pyb::repr(pyb::str(g.group->info().name)).cast<std::string>() +
                                ">";
                     });
    group.attr("EVENT_BASED") = static_cast<uint32_t>(hal::kSamplingEventBased);
    group.attr("TIME_BASED") = static_cast<uint32_t>(hal::kSamplingTimeBased);
    group.attr("TRACER_BASED") = static_cast<uint32_t>(hal::kSamplingTracerBased);
    group.attr("EXPORT_DMA_BUF") = static_cast<uint32_t>(hal::kGroupExportDmaBuf);
    group.attr("USER_CREATED") = static_cast<uint32_t>(hal::kGroupUserCreated);
    group.attr("OTHER") = static_cast<uint32_t>(hal::kGroupOther);
    group.attr("MARKER") = static_cast<uint32_t>(hal::kGroupMarker);

    auto metric =
        pyb::class_<PyMetric>(m, "Metric", "A metric of a group.")
            .def_property_readonly(
                "name", [](const PyMetric& x) { return x.metric->info().name; }, "Short name.")
            .def_property_readonly(
                "description", [](const PyMetric& x) { return x.metric->info().description; }, "What it measures.")
            .def_property_readonly(
                "component", [](const PyMetric& x) { return x.metric->info().component; }, "Part of the device.")
            .def_property_readonly(
                "tier", [](const PyMetric& x) { return x.metric->info().tier; }, "Tier.")
            .def_property_readonly(
                "metric_type", [](const PyMetric& x) { return x.metric->info().metric_type; },
                "Level Zero metric type (METRIC_TYPE_*).")
            .def_property_readonly(
                "result_type", [](const PyMetric& x) { return x.metric->info().result_type; },
                "Value type: UINT32 0, UINT64 1, FP32 2, FP64 3, BOOL8 4.")
            .def_property_readonly(
                "units", [](const PyMetric& x) { return x.metric->info().units; }, "Units ('' when none).")
            .def_property_readonly(
                "group",
                [](const PyMetric& x) { return PyMetricGroup{metrics::MetricGroupRef(x.metric, &x.metric->group())}; },
                "The group it belongs to.")
            .def("export_dma_buf", &export_of_metric,
                 "(fd, size) of its group's exported memory, for metrics of type EXP_EXPORT_DMA_BUF "
                 "(InvalidArgumentError for the others).")
            .def("__eq__",
                 [](const PyMetric& a, pyb::object b) {
                     const PyMetric* other = instance_of<PyMetric>(b.ptr());
                     return other && a.metric.get() == other->metric.get();
                 })
            .def("__hash__", [](const PyMetric& x) { return std::hash<const void*>{}(x.metric.get()); })
            .def("__repr__", [](const PyMetric& x) {
                return "<zehal.Metric " + pyb::repr(pyb::str(x.metric->info().name)).cast<std::string>() + ">";
            });
    metric.attr("EVENT_EXP_TIMESTAMP") = static_cast<uint32_t>(hal::kMetricEventExpTimestamp);
    metric.attr("EVENT_EXP_START") = static_cast<uint32_t>(hal::kMetricEventExpStart);
    metric.attr("EVENT_EXP_END") = static_cast<uint32_t>(hal::kMetricEventExpEnd);
    metric.attr("EVENT_EXP_MONOTONIC_WRAPS_VALUE") = static_cast<uint32_t>(hal::kMetricEventExpMonotonicWrapsValue);
    metric.attr("EXP_EXPORT_DMA_BUF") = static_cast<uint32_t>(hal::kMetricExpExportDmaBuf);
    metric.attr("IP_EXP") = static_cast<uint32_t>(hal::kMetricIpExp);

    m.def(
        "activate_metric_groups",
        [](const hal::DeviceRef& device, const pyb::iterable& groups) {
            const hal::DeviceRef d = device_or_default(device);
            check(metrics::activate(d, groups_arg(groups, "activate_metric_groups")), "activate_metric_groups");
        },
        pyb::arg("device"), pyb::arg("groups"),
        "Activates `groups` on `device` (None: the default device), replacing the previous set; an "
        "empty list deactivates all. InvalidArgumentError for a group of another device or two of "
        "one domain.");
}

}  // namespace

pyb::list device_metric_groups(const hal::DeviceRef& device) {
    std::vector<metrics::MetricGroupRef> groups;
    check(metrics::metric_groups(device, &groups), "Device.metric_groups");
    pyb::list out;
    for (auto& g : groups) out.append(PyMetricGroup{std::move(g)});
    return out;
}

void bind_metrics(pyb::module_& m) {
    bind_constants(m);
    bind_groups(m);
}

}  // namespace zehal::py
