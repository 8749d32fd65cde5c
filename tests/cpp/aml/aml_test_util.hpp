// Helpers of the AML tests: fresh sim devices and their C handles.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "hal/device.hpp"
#include "hal/device_handle.hpp"
#include "hal/sim/sim_backend.hpp"
#include "hal/sim/sim_config.hpp"

namespace zehal::aml::test {

// A fresh sim device with `config`.
inline hal::DeviceRef sim_device(const sim::SimConfig& config = {}) {
    hal::DeviceRef device;
    EXPECT_EQ(sim::create_device(config, &device), ZE_RESULT_SUCCESS);
    return device;
}

// A fresh sim device whose copies run at `bytes_per_s` per engine (so queues back up).
inline hal::DeviceRef throttled_device(uint64_t bytes_per_s) {
    sim::SimConfig config;
    config.bandwidth_bytes_per_s = bytes_per_s;
    return sim_device(config);
}

// The C handle of `device` (valid while the caller keeps the device).
inline zehal_device_t handle(const hal::DeviceRef& device) { return zehal::capi::handle_from_device(device.get()); }

// `n` bytes of a recognizable pattern that depends on `seed`.
inline std::vector<unsigned char> pattern(size_t n, unsigned seed) {
    std::vector<unsigned char> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<unsigned char>((i * 131u + seed * 7u + (i >> 8)) & 0xFF);
    return v;
}

}  // namespace zehal::aml::test
