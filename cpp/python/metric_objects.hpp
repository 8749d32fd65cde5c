// Metric groups and metrics as Python holds them (shared by the metrics and tracer bindings).
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>
#include <vector>

#include "metrics/metric_group.hpp"
#include "python/made_caster.hpp"

namespace zehal::py {

// Python's view of a metric group: the handle keeps the group and its device alive.
struct PyMetricGroup {
    metrics::MetricGroupRef group;
};

// Python's view of a metric.
struct PyMetric {
    metrics::MetricRef metric;
};

}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyMetricGroup)
ZEHAL_PY_MADE_CASTER(zehal::py::PyMetric)

namespace zehal::py {

// The metrics of `refs` as Python objects.
inline std::vector<PyMetric> metric_list(const std::vector<metrics::MetricRef>& refs) {
    std::vector<PyMetric> out;
    out.reserve(refs.size());
    for (const auto& r : refs) out.push_back({r});
    return out;
}

// The groups given from Python, checked to be MetricGroup objects.
inline std::vector<metrics::MetricGroupRef> groups_arg(const pyb::iterable& groups, std::string_view what) {
    std::vector<metrics::MetricGroupRef> out;
    for (pyb::handle h : groups) {
        if (h.is_none()) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": a group is None");
        const PyMetricGroup* g = instance_of<PyMetricGroup>(h.ptr());
        if (!g) throw pyb::type_error(std::string(what) + ": groups must be MetricGroup objects (initialized)");
        out.push_back(g->group);
    }
    return out;
}

}  // namespace zehal::py
