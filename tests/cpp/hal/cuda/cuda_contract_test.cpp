// The HAL conformance suite on the cuda backend: the first CUDA device (skipped with the
// registry's reason where there is none); foreign events and memory come from a sim device.
#include "contract_fixture.hpp"
#include "support/backend_devices.hpp"
#include "hal/sim/sim_backend.hpp"

namespace {

bool sim_device(zehal::hal::DeviceRef* out, std::string* why) {
    const ze_result_t r = zehal::sim::create_device({}, out);
    if (r == ZE_RESULT_SUCCESS) return true;
    *why = "sim::create_device failed: " + std::to_string(r);
    return false;
}

constexpr zehal::test::BackendProvider kCuda{
    .name = "cuda", .device = zehal::test::cuda_device, .other_device = sim_device, .required = nullptr};

}  // namespace

ZEHAL_INSTANTIATE_HAL_CONTRACT(kCuda);
