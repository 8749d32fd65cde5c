// The tracer a benchmark reads: the device's tracer-based groups chosen by name, activated,
// and a tracer over them with a host ring of the size the benchmark needs.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <vector>

#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"

namespace zehal::bench {

// A tracer over the tracer-based groups of `device` named in `names` (the first tracer-based
// group when none of them is there), activated first, with a host ring of `ring_bytes`; the
// groups into *chosen. Null when the device has no such group or a step fails.
inline std::shared_ptr<metrics::Tracer> open_tracer(const hal::DeviceRef& device,
                                                    std::initializer_list<std::string_view> names, size_t ring_bytes,
                                                    std::vector<metrics::MetricGroupRef>* chosen) {
    std::vector<metrics::MetricGroupRef> all;
    chosen->clear();
    if (metrics::metric_groups(device, &all) != ZE_RESULT_SUCCESS) return nullptr;
    for (auto& g : all)
        for (auto n : names)
            if (g->info().name == n && g->tracer_based()) chosen->push_back(g);
    for (auto& g : all)
        if (chosen->empty() && g->tracer_based()) chosen->push_back(g);
    if (chosen->empty() || metrics::activate(device, *chosen) != ZE_RESULT_SUCCESS) return nullptr;
    std::vector<const metrics::MetricGroup*> raw;
    for (auto& g : *chosen) raw.push_back(g.get());
    std::shared_ptr<metrics::Tracer> tracer;
    uint32_t notify = 0;
    metrics::TracerOptions options;
    options.ring_bytes = ring_bytes;
    if (metrics::Tracer::create(device, raw, &notify, nullptr, &tracer, options) != ZE_RESULT_SUCCESS) return nullptr;
    return tracer;
}

}  // namespace zehal::bench
