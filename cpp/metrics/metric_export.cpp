#include "metrics/metric_export.hpp"

namespace zehal::metrics {

ze_result_t export_dma_buf(const MetricGroup& group, int* fd, size_t* size) {
    if (!fd || !size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!(group.info().type_flags & hal::kGroupExportDmaBuf)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    hal::DeviceRef device = group.owner().device();
    if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    int out_fd = -1;
    size_t out_size = 0;
    if (ze_result_t r = device->export_dma_buf(group.index(), &out_fd, &out_size); r != ZE_RESULT_SUCCESS) return r;
    *fd = out_fd;
    *size = out_size;
    return ZE_RESULT_SUCCESS;
}

ze_result_t export_dma_buf(const Metric& metric, int* fd, size_t* size) {
    if (!fd || !size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (metric.info().metric_type != hal::kMetricExpExportDmaBuf) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return export_dma_buf(metric.group(), fd, size);
}

}  // namespace zehal::metrics
