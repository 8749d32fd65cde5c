// The Level Zero benchmarks' way to the driver and to one of its devices through the loader.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "paired_rounds.hpp"

namespace zehal::bench {

// The loader's first driver (zeInit for GPUs, then zeDriverGet); exits when there is none.
inline ze_driver_handle_t first_ze_driver() {
    ZEHAL_BENCH_ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver = nullptr;
    ZEHAL_BENCH_ZE_CHECK(zeDriverGet(&count, &driver));
    return driver;
}

// The driver's device whose name is `name`; exits when it has none.
inline ze_device_handle_t find_ze_device(ze_driver_handle_t driver, const std::string& name) {
    uint32_t n = 0;
    ZEHAL_BENCH_ZE_CHECK(zeDeviceGet(driver, &n, nullptr));
    std::vector<ze_device_handle_t> all(n);
    ZEHAL_BENCH_ZE_CHECK(zeDeviceGet(driver, &n, all.data()));
    for (ze_device_handle_t d : all) {
        ze_device_properties_t p{};
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        ZEHAL_BENCH_ZE_CHECK(zeDeviceGetProperties(d, &p));
        if (name == p.name) return d;
    }
    std::fprintf(stderr, "the driver has no device named %s\n", name.c_str());
    std::exit(1);
}

}  // namespace zehal::bench
