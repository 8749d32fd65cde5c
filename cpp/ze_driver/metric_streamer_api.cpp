// Metric streamers: time-based sampling of a metric group (zetMetricStreamerOpen,
// ReadData, Close) and their markers in command lists; the handle tables of the metric
// objects.
#include "command_list.hpp"
#include "dispatch.hpp"
#include "metric_objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {

HandleTable<StreamerObject>& streamers() {
    static auto* t = new HandleTable<StreamerObject>(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);  // until the process exits
    return *t;
}
HandleTable<QueryPoolObject>& query_pools() {
    static auto* t = new HandleTable<QueryPoolObject>(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);  // until the process exits
    return *t;
}
HandleTable<QueryObject>& queries() {
    static auto* t = new HandleTable<QueryObject>(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);  // until the process exits
    return *t;
}

namespace {

// Opens a streamer; the descriptor's sampling period and report count are written back
// with the values used.
ze_result_t zetMetricStreamerOpen_(zet_context_handle_t hContext, zet_device_handle_t hDevice,
                                   zet_metric_group_handle_t hMetricGroup, zet_metric_streamer_desc_t* desc,
                                   ze_event_handle_t hNotificationEvent,
                                   zet_metric_streamer_handle_t* phMetricStreamer) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        metrics::MetricGroupRef g;
        if (ze_result_t r = metric_target(hContext, hDevice, hMetricGroup, &d, &g); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phMetricStreamer) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        metrics::Notification notification;
        if (ze_result_t r = notification_event(hNotificationEvent, d, &notification); r != ZE_RESULT_SUCCESS) return r;
        auto object = std::make_shared<StreamerObject>();
        if (ze_result_t r = metrics::Streamer::open(d->device, g.get(), &desc->samplingPeriod,
                                                    &desc->notifyEveryNReports, notification, &object->streamer);
            r != ZE_RESULT_SUCCESS)
            return r;
        *phMetricStreamer = to_handle<zet_metric_streamer_handle_t>(streamers().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zetMetricStreamerClose_(zet_metric_streamer_handle_t hMetricStreamer) {
    return ze_guarded([&] {
        std::shared_ptr<StreamerObject> s;
        if (ze_result_t r = streamers().get(hMetricStreamer, &s); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = s->streamer->close(); r != ZE_RESULT_SUCCESS) return r;
        streamers().remove(hMetricStreamer);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zetMetricStreamerReadData_(zet_metric_streamer_handle_t hMetricStreamer, uint32_t maxReportCount,
                                       size_t* pRawDataSize, uint8_t* pRawData) {
    return ze_guarded([&] {
        std::shared_ptr<StreamerObject> s;
        if (ze_result_t r = streamers().get(hMetricStreamer, &s); r != ZE_RESULT_SUCCESS) return r;
        return s->streamer->read(maxReportCount, pRawDataSize, pRawData);
    });
}

// A marker: in queue order, the device's global timestamp into a slot of the streamer, whose
// report ending there carries `value` (metrics::Streamer::add_marker). A regular list's
// marker takes a new slot at each execution, so it marks every run of the list.
ze_result_t zetCommandListAppendMetricStreamerMarker_(zet_command_list_handle_t hCommandList,
                                                      zet_metric_streamer_handle_t hMetricStreamer, uint32_t value) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list;
        if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
        std::shared_ptr<StreamerObject> s;
        if (ze_result_t r = streamers().get(hMetricStreamer, &s); r != ZE_RESULT_SUCCESS) return r;
        if (s->streamer->device() != list->device()->device) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        Command c;
        c.kind = Command::Kind::streamer_marker;
        c.streamer = s->streamer;
        c.marker_value = value;
        return list->append(std::move(c));
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zetMetricStreamerOpen, zetMetricStreamerOpen_),
    ZEHAL_ENTRY(zetMetricStreamerClose, zetMetricStreamerClose_),
    ZEHAL_ENTRY(zetMetricStreamerReadData, zetMetricStreamerReadData_),
    ZEHAL_ENTRY(zetCommandListAppendMetricStreamerMarker, zetCommandListAppendMetricStreamerMarker_),
};

}  // namespace

std::span<const Entry> metric_streamer_entries() { return kEntries; }

}  // namespace zehal::ze_driver
