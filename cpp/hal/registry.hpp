// The backend registry: which backends exist here, in order level_zero, cuda, sim.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/backend.hpp"

namespace zehal::hal {

// Every known backend in registry order, probed once (thread-safe).
const std::vector<BackendStatus>& backends();
// The backends zehal drives itself (cuda, sim), each probed once on its own: never the
// level_zero backend, whose probe loads the Level Zero loader and so zehal's own driver.
// That driver asks for these while the level_zero probe may be running on the same
// thread: they never wait for it.
std::vector<BackendStatus> native_backends();
// The backend named `name`: INVALID_ARGUMENT for an unknown name,
// DEPENDENCY_UNAVAILABLE for a known one that is not available here.
ze_result_t find_backend(std::string_view name, std::shared_ptr<Backend>* out);
// The backend ZEHAL_BACKEND names, else the first available one with a device.
ze_result_t default_backend(std::shared_ptr<Backend>* out);
// First device of the default backend.
ze_result_t default_device(DeviceRef* out);

}  // namespace zehal::hal
