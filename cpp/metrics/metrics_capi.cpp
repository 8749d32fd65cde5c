// The metrics C API (zehal/metrics.h): a thin shell over the metrics layer.
#include "common/api_call_log.hpp"
#include "zehal/metrics.h"

#include <algorithm>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "hal/device_handle.hpp"
#include "common/c_boundary.hpp"
#include "common/handle_table.hpp"
#include "hal/event_handle.hpp"
#include "metrics/decoder.hpp"
#include "metrics/metric_export.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"

namespace zehal::capi {
namespace {

static_assert(sizeof(zehal_metric_entry_t) == sizeof(metrics::MetricEntry) &&
                  offsetof(zehal_metric_entry_t, metric_index) == offsetof(metrics::MetricEntry, metric_index) &&
                  offsetof(zehal_metric_entry_t, on_subdevice) == offsetof(metrics::MetricEntry, on_subdevice) &&
                  offsetof(zehal_metric_entry_t, subdevice_id) == offsetof(metrics::MetricEntry, subdevice_id),
              "zehal_metric_entry_t is metrics::MetricEntry");

HandleTable<metrics::Tracer>& tracers() {
    static auto* t = new HandleTable<metrics::Tracer>;  // used until the process exits
    return *t;
}

HandleTable<metrics::Decoder>& decoders() {
    static auto* t = new HandleTable<metrics::Decoder>;
    return *t;
}

hal::DeviceRef device_ref(zehal_device_t handle) {
    hal::Device* d = device_from_handle(handle);
    return d ? d->shared_from_this() : nullptr;
}

ze_result_t group_of(zehal_metric_group_t handle, metrics::MetricGroupRef* out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    *out = metrics::DeviceMetrics::find_group(handle);
    return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t metric_of(zehal_metric_t handle, metrics::MetricRef* out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    *out = metrics::DeviceMetrics::find_metric(handle);
    return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

void copy_string(char (&dst)[ZEHAL_MAX_METRIC_STRING], const std::string& src) {
    const size_t n = std::min(src.size(), sizeof dst - 1);
    std::memcpy(dst, src.data(), n);
    dst[n] = '\0';
}

// Level Zero's count protocol: *count 0 asks the total; else at most *count are written.
template <typename T, typename Handle>
ze_result_t hand_out(uint32_t* count, Handle* out, const std::vector<T>& items) {
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const auto total = static_cast<uint32_t>(items.size());
    if (*count == 0) {
        *count = total;
        return ZE_RESULT_SUCCESS;
    }
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = std::min(*count, total);
    for (uint32_t i = 0; i < *count; ++i)
        out[i] = reinterpret_cast<Handle>(const_cast<void*>(static_cast<const void*>(items[i])));
    return ZE_RESULT_SUCCESS;
}

}  // namespace
}  // namespace zehal::capi

using namespace zehal;
using namespace zehal::capi;

extern "C" {

ze_result_t zehal_metric_group_get(zehal_device_t device, uint32_t* count, zehal_metric_group_t* groups) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        hal::DeviceRef d = device_ref(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        std::shared_ptr<metrics::DeviceMetrics> state;
        if (ze_result_t r = metrics::DeviceMetrics::of(d, &state); r != ZE_RESULT_SUCCESS) return r;
        std::vector<const metrics::MetricGroup*> all;
        for (uint32_t i = 0; i < state->group_count(); ++i) all.push_back(state->group_ptr(i));
        return hand_out(count, groups, all);
    });
}

ze_result_t zehal_metric_group_get_properties(zehal_metric_group_t group, zehal_metric_group_properties_t* properties) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        metrics::MetricGroupRef g;
        if (ze_result_t r = group_of(group, &g); r != ZE_RESULT_SUCCESS) return r;
        if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const hal::MetricGroupInfo& info = g->info();
        copy_string(properties->name, info.name);
        copy_string(properties->description, info.description);
        properties->sampling_types = info.sampling_types;
        properties->type_flags = info.type_flags;
        properties->domain = info.domain;
        properties->metric_count = static_cast<uint32_t>(info.metrics.size());
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_metric_get(zehal_metric_group_t group, uint32_t* count, zehal_metric_t* metrics) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        metrics::MetricGroupRef g;
        if (ze_result_t r = group_of(group, &g); r != ZE_RESULT_SUCCESS) return r;
        std::vector<const metrics::Metric*> all;
        for (const metrics::Metric& m : g->metrics()) all.push_back(&m);
        return hand_out(count, metrics, all);
    });
}

ze_result_t zehal_metric_get_properties(zehal_metric_t metric, zehal_metric_properties_t* properties) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        metrics::MetricRef m;
        if (ze_result_t r = metric_of(metric, &m); r != ZE_RESULT_SUCCESS) return r;
        if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const hal::MetricInfo& info = m->info();
        copy_string(properties->name, info.name);
        copy_string(properties->description, info.description);
        copy_string(properties->component, info.component);
        properties->tier = info.tier;
        properties->metric_type = info.metric_type;
        properties->result_type = info.result_type;
        copy_string(properties->units, info.units);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_device_activate_metric_groups(zehal_device_t device, uint32_t count, zehal_metric_group_t* groups) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        hal::DeviceRef d = device_ref(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (count && !groups) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<metrics::MetricGroupRef> refs(count);
        for (uint32_t i = 0; i < count; ++i)
            if (ze_result_t r = group_of(groups[i], &refs[i]); r != ZE_RESULT_SUCCESS) return r;
        return metrics::activate(d, refs);
    });
}

ze_result_t zehal_metric_group_get_export_dma_buf(zehal_metric_group_t group, int* fd, size_t* size) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        metrics::MetricGroupRef g;
        if (ze_result_t r = group_of(group, &g); r != ZE_RESULT_SUCCESS) return r;
        return metrics::export_dma_buf(*g, fd, size);
    });
}

ze_result_t zehal_metric_get_export_dma_buf(zehal_metric_t metric, int* fd, size_t* size) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        metrics::MetricRef m;
        if (ze_result_t r = metric_of(metric, &m); r != ZE_RESULT_SUCCESS) return r;
        return metrics::export_dma_buf(*m, fd, size);
    });
}

ze_result_t zehal_metric_tracer_create(zehal_device_t device, uint32_t group_count, zehal_metric_group_t* groups,
                                       uint32_t* notify_every_n_bytes, zehal_event_t notification,
                                       zehal_metric_tracer_t* tracer) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        hal::DeviceRef d = device_ref(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!tracer || !notify_every_n_bytes || (group_count && !groups)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (group_count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
        std::vector<metrics::MetricGroupRef> refs(group_count);
        std::vector<const metrics::MetricGroup*> raw(group_count);
        for (uint32_t i = 0; i < group_count; ++i) {
            if (ze_result_t r = group_of(groups[i], &refs[i]); r != ZE_RESULT_SUCCESS) return r;
            raw[i] = refs[i].get();
        }
        hal::EventRef event;
        if (notification) {
            event = event_from_handle(notification);
            if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        }
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = metrics::Tracer::create(d, raw, notify_every_n_bytes, event, &t); r != ZE_RESULT_SUCCESS)
            return r;
        *tracer = reinterpret_cast<zehal_metric_tracer_t>(tracers().add(std::move(t)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_metric_tracer_destroy(zehal_metric_tracer_t tracer) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = tracers().get(tracer, &t); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = t->destroy(); r != ZE_RESULT_SUCCESS) return r;
        tracers().remove(tracer);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_metric_tracer_enable(zehal_metric_tracer_t tracer, uint8_t synchronous) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = tracers().get(tracer, &t); r != ZE_RESULT_SUCCESS) return r;
        return t->enable(synchronous != 0);
    });
}

ze_result_t zehal_metric_tracer_disable(zehal_metric_tracer_t tracer, uint8_t synchronous) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = tracers().get(tracer, &t); r != ZE_RESULT_SUCCESS) return r;
        return t->disable(synchronous != 0);
    });
}

ze_result_t zehal_metric_tracer_read_data(zehal_metric_tracer_t tracer, size_t* raw_size, uint8_t* raw) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = tracers().get(tracer, &t); r != ZE_RESULT_SUCCESS) return r;
        return t->read(raw_size, raw);
    });
}

ze_result_t zehal_metric_tracer_get_dropped(zehal_metric_tracer_t tracer, uint64_t* dropped) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = tracers().get(tracer, &t); r != ZE_RESULT_SUCCESS) return r;
        if (!dropped) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *dropped = t->dropped();
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_metric_decoder_create(zehal_metric_tracer_t tracer, zehal_metric_decoder_t* decoder) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = tracers().get(tracer, &t); r != ZE_RESULT_SUCCESS) return r;
        if (!decoder) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<metrics::Decoder> d;
        if (ze_result_t r = metrics::Decoder::create(t, &d); r != ZE_RESULT_SUCCESS) return r;
        *decoder = reinterpret_cast<zehal_metric_decoder_t>(decoders().add(std::move(d)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_metric_decoder_destroy(zehal_metric_decoder_t decoder) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Decoder> d;
        if (ze_result_t r = decoders().get(decoder, &d); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = d->destroy(); r != ZE_RESULT_SUCCESS) return r;
        decoders().remove(decoder);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_metric_decoder_get_decodable_metrics(zehal_metric_decoder_t decoder, uint32_t* count,
                                                       zehal_metric_t* metrics) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Decoder> d;
        if (ze_result_t r = decoders().get(decoder, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<const metrics::Metric*> out(*count);
        if (ze_result_t r = d->decodable_metrics(count, metrics ? out.data() : nullptr); r != ZE_RESULT_SUCCESS)
            return r;
        if (metrics)
            for (uint32_t i = 0; i < *count && i < out.size(); ++i)
                metrics[i] = reinterpret_cast<zehal_metric_t>(const_cast<metrics::Metric*>(out[i]));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zehal_metric_tracer_decode(zehal_metric_decoder_t decoder, size_t* raw_size, const uint8_t* raw,
                                       uint32_t metric_count, zehal_metric_t* metrics, uint32_t* set_count,
                                       uint32_t* entries_per_set, uint32_t* entry_count,
                                       zehal_metric_entry_t* entries) {
    ZEHAL_TIMED_API_CALL();
    return ze_guarded([&]() -> ze_result_t {
        std::shared_ptr<metrics::Decoder> d;
        if (ze_result_t r = decoders().get(decoder, &d); r != ZE_RESULT_SUCCESS) return r;
        if (metric_count && !metrics) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // Handles are compared with the decoder's metrics, never dereferenced here.
        std::span<const metrics::Metric* const> subset(reinterpret_cast<const metrics::Metric* const*>(metrics),
                                                       metric_count);
        return d->decode(raw_size, raw, subset, set_count, entries_per_set, entry_count,
                         reinterpret_cast<metrics::MetricEntry*>(entries));
    });
}

}  // extern "C"
