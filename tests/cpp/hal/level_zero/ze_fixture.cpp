#include "ze_fixture.hpp"

#include <cstdlib>
#include <cstring>

namespace zehal::test {

bool level_zero_required() {
    const char* v = std::getenv("ZEHAL_REQUIRE_LEVEL_ZERO");
    return v && *v && std::strcmp(v, "0") != 0;
}

bool level_zero_device(hal::DeviceRef* device, std::string* why) {
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name != "level_zero") continue;
        if (!b.available) {
            *why = "level_zero backend unavailable: " + b.reason;
            return false;
        }
        if (b.backend->devices().empty()) {
            *why = "level_zero backend has no device";
            return false;
        }
        *device = b.backend->devices().front();
        return true;
    }
    *why = "no level_zero backend in the registry";
    return false;
}

hal::DeviceRef driver_twin() {
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name == "level_zero" || !b.available || b.backend->devices().empty()) continue;
        return b.backend->devices().front();
    }
    return nullptr;
}

}  // namespace zehal::test
