// Metric groups and metrics (with the export memory extension's chained structures),
// their activation, the metric tracer and the decoder.
#include <vector>

#include "chain.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"
#include "metrics/metric_export.hpp"
#include "metrics/metric_group.hpp"

namespace zehal::ze_driver {
namespace {

static_assert(sizeof(zet_metric_entry_exp_t) == sizeof(metrics::MetricEntry) &&
                  offsetof(zet_metric_entry_exp_t, metricIndex) == offsetof(metrics::MetricEntry, metric_index) &&
                  offsetof(zet_metric_entry_exp_t, onSubdevice) == offsetof(metrics::MetricEntry, on_subdevice) &&
                  offsetof(zet_metric_entry_exp_t, subdeviceId) == offsetof(metrics::MetricEntry, subdevice_id),
              "zet_metric_entry_exp_t is metrics::MetricEntry");

// The group behind a handle: INVALID_NULL_HANDLE for null or a value that is no group of a
// live device (another kind's handle included), as for every handle of the driver.
ze_result_t group_of(zet_metric_group_handle_t handle, metrics::MetricGroupRef* out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    *out = metrics::DeviceMetrics::find_group(handle);
    return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

// The metric behind a handle: INVALID_NULL_HANDLE for null or a value that is no metric.
ze_result_t metric_of(zet_metric_handle_t handle, metrics::MetricRef* out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    *out = metrics::DeviceMetrics::find_metric(handle);
    return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

template <typename Handle, typename T>
Handle handle_to(const T* object) {
    return reinterpret_cast<Handle>(const_cast<T*>(object));
}

// The groups of a handle array, as raw pointers kept alive by `refs`.
ze_result_t groups_of(uint32_t count, zet_metric_group_handle_t* handles, std::vector<metrics::MetricGroupRef>* refs,
                      std::vector<const metrics::MetricGroup*>* raw) {
    if (count > 0 && !handles) return ZE_RESULT_ERROR_INVALID_SIZE;
    for (uint32_t i = 0; i < count; ++i) {
        metrics::MetricGroupRef g;
        if (ze_result_t r = group_of(handles[i], &g); r != ZE_RESULT_SUCCESS) return r;
        raw->push_back(g.get());
        refs->push_back(std::move(g));
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t zetMetricGroupGet_(zet_device_handle_t hDevice, uint32_t* pCount,
                               zet_metric_group_handle_t* phMetricGroups) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        std::vector<metrics::MetricGroupRef> groups;
        if (ze_result_t r = metrics::metric_groups(d->device, &groups); r != ZE_RESULT_SUCCESS) return r;
        return hand_out(pCount, phMetricGroups != nullptr, static_cast<uint32_t>(groups.size()),
                        [&](uint32_t i) { phMetricGroups[i] = handle_to<zet_metric_group_handle_t>(groups[i].get()); });
    });
}

// Group properties; the chain may ask the group's type (zet_metric_group_type_exp_t), its
// exported memory (zet_export_dma_buf_exp_properties_t, export groups only) and its source
// (zet_metric_source_id_exp_t): the group's domain, since each domain of a zehal device is
// one producer of data (docs/ze_driver.md).
ze_result_t zetMetricGroupGetProperties_(zet_metric_group_handle_t hMetricGroup, zet_metric_group_properties_t* p) {
    return ze_guarded([&] {
        metrics::MetricGroupRef g;
        if (ze_result_t r = group_of(hMetricGroup, &g); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (auto* dma = find_in_chain<zet_export_dma_buf_exp_properties_t>(
                p, {ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES}, ZEHAL_STYPE_EXPORT_DMA_BUF_EXP_PROPERTIES))
            if (ze_result_t r = metrics::export_dma_buf(*g, &dma->fd, &dma->size); r != ZE_RESULT_SUCCESS) return r;
        const hal::MetricGroupInfo& info = g->info();
        copy_name(p->name, info.name);
        copy_name(p->description, info.description);
        p->samplingType = info.sampling_types;
        p->domain = info.domain;
        p->metricCount = static_cast<uint32_t>(info.metrics.size());
        if (auto* type = find_in_chain<zet_metric_group_type_exp_t>(p, {ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES},
                                                                    ZEHAL_STYPE_METRIC_GROUP_TYPE_EXP))
            type->type = info.type_flags;
        if (auto* source = find_in_chain<zet_metric_source_id_exp_t>(p, {ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES},
                                                                     ZEHAL_STYPE_METRIC_SOURCE_ID_EXP))
            source->sourceId = info.domain;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zetMetricGet_(zet_metric_group_handle_t hMetricGroup, uint32_t* pCount, zet_metric_handle_t* phMetrics) {
    return ze_guarded([&] {
        metrics::MetricGroupRef g;
        if (ze_result_t r = group_of(hMetricGroup, &g); r != ZE_RESULT_SUCCESS) return r;
        const auto& all = g->metrics();
        return hand_out(pCount, phMetrics != nullptr, static_cast<uint32_t>(all.size()),
                        [&](uint32_t i) { phMetrics[i] = handle_to<zet_metric_handle_t>(&all[i]); });
    });
}

ze_result_t zetMetricGetProperties_(zet_metric_handle_t hMetric, zet_metric_properties_t* p) {
    return ze_guarded([&] {
        metrics::MetricRef m;
        if (ze_result_t r = metric_of(hMetric, &m); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (auto* dma = find_in_chain<zet_export_dma_buf_exp_properties_t>(p, {ZET_STRUCTURE_TYPE_METRIC_PROPERTIES},
                                                                           ZEHAL_STYPE_EXPORT_DMA_BUF_EXP_PROPERTIES))
            if (ze_result_t r = metrics::export_dma_buf(*m, &dma->fd, &dma->size); r != ZE_RESULT_SUCCESS) return r;
        const hal::MetricInfo& info = m->info();
        copy_name(p->name, info.name);
        copy_name(p->description, info.description);
        copy_name(p->component, info.component);
        p->tierNumber = info.tier;
        p->metricType = static_cast<zet_metric_type_t>(info.metric_type);
        p->resultType = static_cast<zet_value_type_t>(info.result_type);
        copy_name(p->resultUnits, info.units);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zetContextActivateMetricGroups_(zet_context_handle_t hContext, zet_device_handle_t hDevice, uint32_t count,
                                            zet_metric_group_handle_t* phMetricGroups) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        std::vector<metrics::MetricGroupRef> refs;
        std::vector<const metrics::MetricGroup*> raw;
        if (ze_result_t r = groups_of(count, phMetricGroups, &refs, &raw); r != ZE_RESULT_SUCCESS) return r;
        return metrics::activate(d->device, refs);
    });
}

ze_result_t zetMetricTracerCreateExp_(zet_context_handle_t hContext, zet_device_handle_t hDevice,
                                      uint32_t metricGroupCount, zet_metric_group_handle_t* phMetricGroups,
                                      zet_metric_tracer_exp_desc_t* desc, ze_event_handle_t hNotificationEvent,
                                      zet_metric_tracer_exp_handle_t* phMetricTracer) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!phMetricGroups || !desc || !phMetricTracer) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<metrics::MetricGroupRef> refs;
        std::vector<const metrics::MetricGroup*> raw;
        if (ze_result_t r = groups_of(metricGroupCount, phMetricGroups, &refs, &raw); r != ZE_RESULT_SUCCESS) return r;
        metrics::Notification notification;
        if (ze_result_t r = notification_event(hNotificationEvent, d, &notification); r != ZE_RESULT_SUCCESS) return r;
        auto object = std::make_shared<TracerObject>();
        if (ze_result_t r = metrics::Tracer::create(d->device, raw, &desc->notifyEveryNBytes, notification,
                                                    &object->tracer);
            r != ZE_RESULT_SUCCESS)
            return r;
        *phMetricTracer = to_handle<zet_metric_tracer_exp_handle_t>(tracers().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

// Runs `f` on the tracer of `hMetricTracer`.
template <typename F>
ze_result_t with_tracer(zet_metric_tracer_exp_handle_t hMetricTracer, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<TracerObject> t;
        if (ze_result_t r = tracers().get(hMetricTracer, &t); r != ZE_RESULT_SUCCESS) return r;
        return f(*t->tracer);
    });
}

ze_result_t zetMetricTracerDestroyExp_(zet_metric_tracer_exp_handle_t hMetricTracer) {
    return with_tracer(hMetricTracer, [&](metrics::Tracer& t) {
        if (ze_result_t r = t.destroy(); r != ZE_RESULT_SUCCESS) return r;
        tracers().remove(hMetricTracer);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zetMetricTracerEnableExp_(zet_metric_tracer_exp_handle_t hMetricTracer, ze_bool_t synchronous) {
    return with_tracer(hMetricTracer, [&](metrics::Tracer& t) { return t.enable(synchronous != 0); });
}

ze_result_t zetMetricTracerDisableExp_(zet_metric_tracer_exp_handle_t hMetricTracer, ze_bool_t synchronous) {
    return with_tracer(hMetricTracer, [&](metrics::Tracer& t) { return t.disable(synchronous != 0); });
}

ze_result_t zetMetricTracerReadDataExp_(zet_metric_tracer_exp_handle_t hMetricTracer, size_t* pRawDataSize,
                                        uint8_t* pRawData) {
    return with_tracer(hMetricTracer, [&](metrics::Tracer& t) {
        if (!pRawDataSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (*pRawDataSize != 0 && !pRawData) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return t.read(pRawDataSize, pRawData);
    });
}

ze_result_t zetMetricDecoderCreateExp_(zet_metric_tracer_exp_handle_t hMetricTracer,
                                       zet_metric_decoder_exp_handle_t* phMetricDecoder) {
    return ze_guarded([&] {
        std::shared_ptr<TracerObject> t;
        if (ze_result_t r = tracers().get(hMetricTracer, &t); r != ZE_RESULT_SUCCESS) return r;
        if (!phMetricDecoder) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        auto object = std::make_shared<DecoderObject>();
        if (ze_result_t r = metrics::Decoder::create(t->tracer, &object->decoder); r != ZE_RESULT_SUCCESS) return r;
        *phMetricDecoder = to_handle<zet_metric_decoder_exp_handle_t>(decoders().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

// Runs `f` on the decoder of `hMetricDecoder`.
template <typename F>
ze_result_t with_decoder(zet_metric_decoder_exp_handle_t hMetricDecoder, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<DecoderObject> d;
        if (ze_result_t r = decoders().get(hMetricDecoder, &d); r != ZE_RESULT_SUCCESS) return r;
        return f(*d->decoder);
    });
}

ze_result_t zetMetricDecoderDestroyExp_(zet_metric_decoder_exp_handle_t hMetricDecoder) {
    return with_decoder(hMetricDecoder, [&](metrics::Decoder& d) {
        if (ze_result_t r = d.destroy(); r != ZE_RESULT_SUCCESS) return r;
        decoders().remove(hMetricDecoder);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zetMetricDecoderGetDecodableMetricsExp_(zet_metric_decoder_exp_handle_t hMetricDecoder, uint32_t* pCount,
                                                    zet_metric_handle_t* phMetrics) {
    return with_decoder(hMetricDecoder, [&](metrics::Decoder& d) {
        if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (*pCount != 0 && !phMetrics) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        static_assert(sizeof(zet_metric_handle_t) == sizeof(const metrics::Metric*));
        return d.decodable_metrics(pCount, reinterpret_cast<const metrics::Metric**>(static_cast<void*>(phMetrics)));
    });
}

ze_result_t zetMetricTracerDecodeExp_(zet_metric_decoder_exp_handle_t hMetricDecoder, size_t* pRawDataSize,
                                      uint8_t* pRawData, uint32_t metricsCount, zet_metric_handle_t* phMetrics,
                                      uint32_t* pSetCount, uint32_t* pMetricEntriesCountPerSet,
                                      uint32_t* pMetricEntriesCount, zet_metric_entry_exp_t* pMetricEntries) {
    return with_decoder(hMetricDecoder, [&](metrics::Decoder& d) {
        if (!pRawDataSize || !pSetCount || !pMetricEntriesCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (*pRawDataSize != 0 && !pRawData) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (metricsCount > 0 && !phMetrics) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<metrics::MetricRef> refs;
        std::vector<const metrics::Metric*> subset;
        for (uint32_t i = 0; i < metricsCount; ++i) {
            metrics::MetricRef m;
            if (ze_result_t r = metric_of(phMetrics[i], &m); r != ZE_RESULT_SUCCESS) return r;
            subset.push_back(m.get());
            refs.push_back(std::move(m));
        }
        if (*pMetricEntriesCount != 0 && *pSetCount != 0 && !pMetricEntries)
            return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return d.decode(pRawDataSize, pRawData, subset, pSetCount, pMetricEntriesCountPerSet, pMetricEntriesCount,
                        reinterpret_cast<metrics::MetricEntry*>(pMetricEntries));
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zetMetricGroupGet, zetMetricGroupGet_),
    ZEHAL_ENTRY(zetMetricGroupGetProperties, zetMetricGroupGetProperties_),
    ZEHAL_ENTRY(zetMetricGet, zetMetricGet_),
    ZEHAL_ENTRY(zetMetricGetProperties, zetMetricGetProperties_),
    ZEHAL_ENTRY(zetContextActivateMetricGroups, zetContextActivateMetricGroups_),
    ZEHAL_ENTRY(zetMetricTracerCreateExp, zetMetricTracerCreateExp_),
    ZEHAL_ENTRY(zetMetricTracerDestroyExp, zetMetricTracerDestroyExp_),
    ZEHAL_ENTRY(zetMetricTracerEnableExp, zetMetricTracerEnableExp_),
    ZEHAL_ENTRY(zetMetricTracerDisableExp, zetMetricTracerDisableExp_),
    ZEHAL_ENTRY(zetMetricTracerReadDataExp, zetMetricTracerReadDataExp_),
    ZEHAL_ENTRY(zetMetricDecoderCreateExp, zetMetricDecoderCreateExp_),
    ZEHAL_ENTRY(zetMetricDecoderDestroyExp, zetMetricDecoderDestroyExp_),
    ZEHAL_ENTRY(zetMetricDecoderGetDecodableMetricsExp, zetMetricDecoderGetDecodableMetricsExp_),
    ZEHAL_ENTRY(zetMetricTracerDecodeExp, zetMetricTracerDecodeExp_),
};

}  // namespace

std::span<const Entry> metric_entries() { return kEntries; }

}  // namespace zehal::ze_driver
