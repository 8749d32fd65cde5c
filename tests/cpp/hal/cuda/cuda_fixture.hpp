// What the CUDA backend tests share: the first CUDA device (or a skip with the reason) and
// helpers to move bytes through a queue.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/clock.hpp"
#include "hal/device.hpp"
#include "hal/registry.hpp"
#include "support/device_objects.hpp"

namespace zehal::test {

// Skips the test (with the registry's reason) unless a CUDA device exists; *device is it.
#define ZEHAL_REQUIRE_CUDA(device)                                               \
    do {                                                                         \
        std::string why_;                                                        \
        if (!::zehal::test::cuda_device(&(device), &why_)) GTEST_SKIP() << why_; \
    } while (0)

// The first device of the cuda backend; false with *why when there is none.
bool cuda_device(hal::DeviceRef* device, std::string* why);

}  // namespace zehal::test
