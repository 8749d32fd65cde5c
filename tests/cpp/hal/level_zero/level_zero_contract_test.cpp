// The HAL conformance suite on the level_zero backend, through the real loader (CTest points
// it at zehal's own driver and makes a missing backend a failure); foreign events and memory
// come from a sim device of this process.
#include "contract_fixture.hpp"
#include "hal/sim/sim_backend.hpp"
#include "support/backend_devices.hpp"

namespace {

bool sim_device(zehal::hal::DeviceRef* out, std::string* why) {
    const ze_result_t r = zehal::sim::create_device({}, out);
    if (r == ZE_RESULT_SUCCESS) return true;
    *why = "sim::create_device failed: " + std::to_string(r);
    return false;
}

constexpr zehal::test::BackendProvider kLevelZero{.name = "level_zero",
                                                  .device = zehal::test::level_zero_device,
                                                  .other_device = sim_device,
                                                  .required = zehal::test::level_zero_required};

}  // namespace

ZEHAL_INSTANTIATE_HAL_CONTRACT(kLevelZero);
