// The HAL conformance suite on the sim backend: every test on a fresh sim device, which also
// injects faults (lose()).
#include "contract_fixture.hpp"
#include "hal/sim/sim_backend.hpp"

namespace {

bool fresh_sim_device(zehal::hal::DeviceRef* out, std::string* why) {
    const ze_result_t r = zehal::sim::create_device({}, out);
    if (r == ZE_RESULT_SUCCESS) return true;
    *why = "sim::create_device failed: " + std::to_string(r);
    return false;
}

bool always() { return true; }

constexpr zehal::test::BackendProvider kSim{
    .name = "sim", .device = fresh_sim_device, .other_device = fresh_sim_device, .required = always, .can_lose = true};

}  // namespace

ZEHAL_INSTANTIATE_HAL_CONTRACT(kSim);
