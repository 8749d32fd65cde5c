// What the tests of each hardware backend share: the first device of a backend of the
// registry (or a skip with the registry's reason, or a failure where the environment
// promised the backend) and the helpers that move bytes through a queue.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "hal/device.hpp"
#include "hal/registry.hpp"
#include "support/device_objects.hpp"

namespace zehal::test {

// The first device of the backend named `name`; false with *why when there is none.
inline bool backend_device(std::string_view name, hal::DeviceRef* device, std::string* why) {
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name != name) continue;
        if (!b.available) {
            *why = std::string(name) + " backend unavailable: " + b.reason;
            return false;
        }
        if (b.backend->devices().empty()) {
            *why = std::string(name) + " backend has no device";
            return false;
        }
        *device = b.backend->devices().front();
        return true;
    }
    *why = "no " + std::string(name) + " backend in the registry";
    return false;
}

// The first device of the cuda backend, of the level_zero backend.
inline bool cuda_device(hal::DeviceRef* device, std::string* why) { return backend_device("cuda", device, why); }
inline bool level_zero_device(hal::DeviceRef* device, std::string* why) {
    return backend_device("level_zero", device, why);
}

// True when the environment says the level_zero backend must be there (CTest sets
// ZEHAL_REQUIRE_LEVEL_ZERO beside ZE_ENABLE_ALT_DRIVERS).
inline bool level_zero_required() {
    const char* v = std::getenv("ZEHAL_REQUIRE_LEVEL_ZERO");
    return v && *v && std::strcmp(v, "0") != 0;
}

// This process's own copy of the device zehal's driver lists first (the first device of the
// first available backend after level_zero, in registry order: cuda, then sim); null when none.
inline hal::DeviceRef driver_twin() {
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name == "level_zero" || !b.available || b.backend->devices().empty()) continue;
        return b.backend->devices().front();
    }
    return nullptr;
}

// Sets *device to the first device of the backend `find` gives, or skips the test with the
// reason; fails it instead when `required` (an expression) is true.
#define ZEHAL_REQUIRE_DEVICE(find, device, required) \
    do {                                             \
        std::string why_;                            \
        if (!(find)(&(device), &why_)) {             \
            if (required) FAIL() << why_;            \
            GTEST_SKIP() << why_;                    \
        }                                            \
    } while (0)

// The first CUDA device, or a skip: CUDA is never required (CI has no GPU).
#define ZEHAL_REQUIRE_CUDA(device) ZEHAL_REQUIRE_DEVICE(::zehal::test::cuda_device, device, false)
// The first level_zero device, or a skip; a failure where level_zero_required().
#define ZEHAL_REQUIRE_LEVEL_ZERO(device) \
    ZEHAL_REQUIRE_DEVICE(::zehal::test::level_zero_device, device, ::zehal::test::level_zero_required())

}  // namespace zehal::test
