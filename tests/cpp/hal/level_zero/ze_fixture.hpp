// What the level_zero backend tests share: the first level_zero device (or a skip with the
// reason, or a failure where CTest pointed the loader at zehal's driver) and helpers.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/clock.hpp"
#include "hal/device.hpp"
#include "hal/registry.hpp"
#include "support/device_objects.hpp"

namespace zehal::test {

// Skips the test (with the registry's reason) unless a level_zero device exists; fails
// instead when ZEHAL_REQUIRE_LEVEL_ZERO is set (CTest sets it beside ZE_ENABLE_ALT_DRIVERS).
#define ZEHAL_REQUIRE_LEVEL_ZERO(device)                              \
    do {                                                              \
        std::string why_;                                             \
        if (!::zehal::test::level_zero_device(&(device), &why_)) {    \
            if (::zehal::test::level_zero_required()) FAIL() << why_; \
            GTEST_SKIP() << why_;                                     \
        }                                                             \
    } while (0)

// The first device of the level_zero backend; false with *why when there is none.
bool level_zero_device(hal::DeviceRef* device, std::string* why);
// True when the environment says the backend must be there.
bool level_zero_required();
// This process's own copy of the device zehal's driver lists first (the first device of the
// first available backend after level_zero, in registry order: cuda, then sim); null when none.
hal::DeviceRef driver_twin();

}  // namespace zehal::test
