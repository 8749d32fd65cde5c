// Metric export memory (contract §6): the dma-buf of export-capable metric groups.
#pragma once

#include <cstddef>

#include "zehal/ze_result.h"
#include "metrics/metric_group.hpp"

namespace zehal::metrics {

// The (fd, size) of `group`'s exported memory. The fd belongs to the group: valid while
// a handle of the group (which keeps its device) lives; dup it to keep it longer.
// INVALID_ARGUMENT for a group without EXPORT_DMA_BUF; INVALID_NULL_POINTER for null
// outputs; the device's error otherwise (DEVICE_LOST, UNSUPPORTED_FEATURE).
ze_result_t export_dma_buf(const MetricGroup& group, int* fd, size_t* size);
// The same for a metric of type EXP_EXPORT_DMA_BUF (its group's memory);
// INVALID_ARGUMENT for any other metric.
ze_result_t export_dma_buf(const Metric& metric, int* fd, size_t* size);

}  // namespace zehal::metrics
