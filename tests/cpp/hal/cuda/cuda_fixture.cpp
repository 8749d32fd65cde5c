#include "cuda_fixture.hpp"

namespace zehal::test {

bool cuda_device(hal::DeviceRef* device, std::string* why) {
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name != "cuda") continue;
        if (!b.available) {
            *why = "cuda backend unavailable: " + b.reason;
            return false;
        }
        if (b.backend->devices().empty()) {
            *why = "cuda backend has no device";
            return false;
        }
        *device = b.backend->devices().front();
        return true;
    }
    *why = "no cuda backend in the registry";
    return false;
}

}  // namespace zehal::test
