// The objects behind metric streamer, query pool and query handles, and the look-up of a
// metric group handle, shared by the driver's metric files.
#pragma once

#include <memory>

#include "objects.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/query.hpp"
#include "metrics/streamer.hpp"

namespace zehal::ze_driver {

struct StreamerObject {
    std::shared_ptr<metrics::Streamer> streamer;
};
struct QueryPoolObject {
    std::shared_ptr<metrics::QueryPool> pool;
};
struct QueryObject {
    std::shared_ptr<metrics::Query> query;
};

// Live handles of each kind (one numbering with every other table of objects.hpp).
HandleTable<StreamerObject>& streamers();
HandleTable<QueryPoolObject>& query_pools();
HandleTable<QueryObject>& queries();

// The group behind a handle: INVALID_NULL_HANDLE for null or a value that is no group of a
// live device.
inline ze_result_t metric_group_of(zet_metric_group_handle_t handle, metrics::MetricGroupRef* out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    *out = metrics::DeviceMetrics::find_group(handle);
    return *out ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

// What a metric object is made for (zetMetricQueryPoolCreate, zetMetricStreamerOpen): a live
// context, the device (*out_device) and the group (*out_group); the look-ups' errors in that order.
inline ze_result_t metric_target(zet_context_handle_t context, zet_device_handle_t device,
                                 zet_metric_group_handle_t group, DeviceObject** out_device,
                                 metrics::MetricGroupRef* out_group) {
    std::shared_ptr<ContextObject> c;
    if (ze_result_t r = contexts().get(context, &c); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = device_of(device, out_device); r != ZE_RESULT_SUCCESS) return r;
    return metric_group_of(group, out_group);
}

}  // namespace zehal::ze_driver
