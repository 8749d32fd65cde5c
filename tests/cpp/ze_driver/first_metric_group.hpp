// The first metric group of the first device that has one (CUDA devices without the
// tracer have none; the sim device always has some).
#pragma once

#include <vector>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

namespace zetest {

// Sets *device and *group and answers true; false when no device has a metric group.
inline bool first_metric_group(const std::vector<ze_device_handle_t>& devices, ze_device_handle_t* device,
                               zet_metric_group_handle_t* group) {
    for (ze_device_handle_t d : devices) {
        uint32_t n = 1;
        if (zetMetricGroupGet(d, &n, group) == ZE_RESULT_SUCCESS && n > 0) {
            *device = d;
            return true;
        }
    }
    return false;
}

}  // namespace zetest
