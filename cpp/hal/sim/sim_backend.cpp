#include "hal/sim/sim_backend.hpp"

#include <cctype>
#include <new>
#include <string>

#include "hal/sim/sim_device.hpp"
#include "hal/sim/sim_memory.hpp"

namespace zehal::sim {

namespace {

// The registry's sim backend: the devices made when it was probed.
class SimBackend final : public hal::Backend {
public:
    explicit SimBackend(std::vector<hal::DeviceRef> devices) : devices_(std::move(devices)) {}
    std::string_view name() const override { return "sim"; }
    const std::vector<hal::DeviceRef>& devices() const override { return devices_; }

private:
    const std::vector<hal::DeviceRef> devices_;
};

}  // namespace

ze_result_t create_device(const SimConfig& config, hal::DeviceRef* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ze_result_t r = config.validate(); r != ZE_RESULT_SUCCESS) return r;
    try {
        *out = std::make_shared<SimDevice>(config, shared_host_memory());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

hal::BackendStatus probe() {
    hal::BackendStatus status;
    status.name = "sim";
    hal::DeviceRef device;
    // ZEHAL_SIM_DEVICES devices of one configuration, peers of one another.
    const SimConfig config = SimConfig::from_env();
    if (std::string problem = config.problem(); !problem.empty()) {
        // Named as the variable that set it: "ZEHAL_SIM_TIMER_HZ = 0 (must be 1..)".
        const size_t end = problem.find(' ');
        for (size_t i = 0; i < end; ++i) problem[i] = static_cast<char>(std::toupper(problem[i]));
        status.reason = "ZEHAL_SIM_" + problem + " (see docs/sim.md)";
        return status;
    }
    std::vector<hal::DeviceRef> devices;
    try {
        for (uint32_t i = 0; i < config.devices; ++i) {
            if (create_device(config, &device) != ZE_RESULT_SUCCESS) {
                status.reason = "the sim device could not be created (out of host memory)";
                return status;
            }
            devices.push_back(std::move(device));
        }
        status.backend = std::make_shared<SimBackend>(std::move(devices));
    } catch (const std::bad_alloc&) {
        status.reason = "the sim devices could not be created (out of host memory)";
        return status;
    }
    status.available = true;
    return status;
}

}  // namespace zehal::sim
