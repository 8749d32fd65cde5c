// The software device backend: always available.
#pragma once

#include "hal/device.hpp"
#include "hal/backend.hpp"
#include "hal/sim/sim_config.hpp"

namespace zehal::sim {

// The registry's entry: SimConfig::from_env().devices devices of that configuration.
hal::BackendStatus probe();
// A fresh device of the sim backend (sharing its host memory) with `config`;
// INVALID_ARGUMENT when config.validate() fails.
ze_result_t create_device(const SimConfig& config, hal::DeviceRef* out);

}  // namespace zehal::sim
