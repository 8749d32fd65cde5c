// Which notification events may serve a device's streamer or tracer.
#include "metrics/notification.hpp"

namespace zehal::metrics {

ze_result_t check_notification(const hal::Device& device, const Notification& n) {
    if (!n.event) return ZE_RESULT_SUCCESS;
    if (!(n.event->pool().flags() & hal::kPoolHostVisible)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (device.owns_event(*n.event)) return ZE_RESULT_SUCCESS;
    return n.made_for_device && device.signals_event(*n.event) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace zehal::metrics
