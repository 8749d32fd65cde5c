// What the HAL conformance suite needs from a backend: a device to test (or the reason there
// is none) and what the backend can do beyond the contract every backend keeps.
#pragma once

#include <ostream>
#include <string>

#include "hal/device.hpp"

namespace zehal::test {

// One backend as the suite sees it. A provider is a plain value: the suite copies it into
// each test's parameter.
struct BackendProvider {
    // Backend name, also the test name suffix ("sim", "cuda", "level_zero").
    const char* name = "";
    // A device of the backend to test; false with *why when the backend has none here.
    bool (*device)(hal::DeviceRef* out, std::string* why) = nullptr;
    // A device other than the one `device` gives (any backend): the source of the foreign
    // events and foreign device memory a queue must refuse.
    bool (*other_device)(hal::DeviceRef* out, std::string* why) = nullptr;
    // True when a missing device is a failure rather than a skip (the environment promised
    // the backend, as CTest does for level_zero through zehal's driver).
    bool (*required)() = nullptr;
    // The backend injects faults: lose() makes the device lost (sim). Elsewhere lose()
    // answers UNSUPPORTED_FEATURE and the device stays usable.
    bool can_lose = false;
};

// GoogleTest prints the parameter by its backend name.
inline void PrintTo(const BackendProvider& p, std::ostream* os) { *os << p.name; }

}  // namespace zehal::test
