// The backend registry: which backends exist here, in order level_zero, cuda, sim.
#pragma once

#include <functional>
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

// Called with a device of a backend, the backend's name and the device's index in it.
using DeviceWatch = std::function<void(const DeviceRef& device, std::string_view backend, uint32_t index)>;
// Calls `watch` with every device of the backends probed so far, then with those of each
// backend when it is probed, before the probe returns (so before anyone uses them). Calls
// are serialised; `watch` must not use the registry (a probe may be under way on its
// thread) and lives until the process exits.
void watch_devices(DeviceWatch watch);

}  // namespace zehal::hal
