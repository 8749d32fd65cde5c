// Metric groups of a Level Zero device (zetMetricGroupGet and the export memory chain).
#pragma once

#include <string>
#include <vector>

#include "hal/level_zero/ze_api.hpp"
#include "hal/metric_info.hpp"

namespace zehal::level_zero {

// A device's metric groups as plain data, beside the driver's handles (same order).
struct MetricGroups {
    std::vector<hal::MetricGroupInfo> infos;
    std::vector<zet_metric_group_handle_t> handles;
};

// Reads every metric group of `device` and its metrics into *out (metric ids numbered
// device-wide, group by group); false with *why when the driver refuses.
bool describe_metric_groups(const ZeApi& api, ze_device_handle_t device, MetricGroups* out, std::string* why);

// The dma-buf fd (owned by the group) and size of export-capable `group`, from the export
// memory structure in its properties' pNext chain; UNSUPPORTED_FEATURE where the driver
// gives none.
ze_result_t export_group_memory(const ZeApi& api, zet_metric_group_handle_t group, int* fd, size_t* size);

}  // namespace zehal::level_zero
