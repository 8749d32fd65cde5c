#include "hal/level_zero/level_zero_metrics.hpp"

#include <string>

#include "hal/level_zero/ext_types.hpp"

namespace zehal::level_zero {

namespace {

// The metrics of `group` into *out; false with *why.
bool describe_group_metrics(const ZeApi& api, zet_metric_group_handle_t group, hal::MetricGroupInfo* out,
                            std::string* why) {
    uint32_t count = 0;
    ze_result_t r = api.zetMetricGet(group, &count, nullptr);
    std::vector<zet_metric_handle_t> metrics(count);
    if (r == ZE_RESULT_SUCCESS && count) r = api.zetMetricGet(group, &count, metrics.data());
    if (r != ZE_RESULT_SUCCESS) {
        *why = "zetMetricGet failed: " + result_text(r);
        return false;
    }
    for (zet_metric_handle_t m : metrics) {
        zet_metric_properties_t p{};
        p.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES;
        if (r = api.zetMetricGetProperties(m, &p); r != ZE_RESULT_SUCCESS) {
            *why = "zetMetricGetProperties failed: " + result_text(r);
            return false;
        }
        hal::MetricInfo info = hal::make_metric(p.name, p.description, p.component, static_cast<uint32_t>(p.metricType),
                                                static_cast<uint32_t>(p.resultType), p.resultUnits);
        info.tier = p.tierNumber;
        out->metrics.push_back(std::move(info));
    }
    return true;
}

}  // namespace

bool describe_metric_groups(const ZeApi& api, ze_device_handle_t device, MetricGroups* out, std::string* why) {
    uint32_t count = 0;
    ze_result_t r = api.zetMetricGroupGet(device, &count, nullptr);
    std::vector<zet_metric_group_handle_t> handles(count);
    if (r == ZE_RESULT_SUCCESS && count) r = api.zetMetricGroupGet(device, &count, handles.data());
    if (r != ZE_RESULT_SUCCESS) {
        *why = "zetMetricGroupGet failed: " + result_text(r);
        return false;
    }
    uint32_t next_id = 0;
    for (zet_metric_group_handle_t h : handles) {
        zet_metric_group_properties_t p{};
        p.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
        MetricGroupTypeExp type{};
        p.pNext = &type;
        if (r = api.zetMetricGroupGetProperties(h, &p); r != ZE_RESULT_SUCCESS) {
            *why = "zetMetricGroupGetProperties failed: " + result_text(r);
            return false;
        }
        hal::MetricGroupInfo info;
        info.name = p.name;
        info.description = p.description;
        info.sampling_types = static_cast<uint32_t>(p.samplingType);
        info.type_flags = type.type;
        info.domain = p.domain;
        info.first_metric_id = next_id;
        if (!describe_group_metrics(api, h, &info, why)) return false;
        next_id += static_cast<uint32_t>(info.metrics.size());
        out->infos.push_back(std::move(info));
        out->handles.push_back(h);
    }
    return true;
}

ze_result_t export_group_memory(const ZeApi& api, zet_metric_group_handle_t group, int* fd, size_t* size) {
    zet_metric_group_properties_t p{};
    p.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
    MetricGroupTypeExp type{};
    ExportDmaBufExpProperties exported{};
    p.pNext = &type;
    type.next = &exported;
    if (ze_result_t r = api.zetMetricGroupGetProperties(group, &p); r != ZE_RESULT_SUCCESS) return r;
    if (!(type.type & hal::kGroupExportDmaBuf) || exported.fd < 0) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    *fd = exported.fd;
    *size = exported.size;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::level_zero
