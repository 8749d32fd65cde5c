// The backend registry: which backends exist here, in order level_zero, cuda, sim.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/backend.hpp"

namespace zehal::hal {

// Keeps the level_zero backend out of this copy of zehal: it is listed as unavailable and
// never probed. zehal's own Level Zero driver calls it before anything else, since probing
// that backend loads the very loader that is loading the driver. False when the backends
// were already probed (then it changes nothing).
bool exclude_level_zero();
// Every known backend in registry order, probed once (thread-safe).
const std::vector<BackendStatus>& backends();
// The backend named `name`: INVALID_ARGUMENT for an unknown name,
// DEPENDENCY_UNAVAILABLE for a known one that is not available here.
ze_result_t find_backend(std::string_view name, std::shared_ptr<Backend>* out);
// The backend ZEHAL_BACKEND names, else the first available one with a device.
ze_result_t default_backend(std::shared_ptr<Backend>* out);
// First device of the default backend.
ze_result_t default_device(DeviceRef* out);

}  // namespace zehal::hal
