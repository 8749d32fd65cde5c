// The interface every backend implements, and what probing one found. The registry
// (hal/registry.hpp) composes backends; backends never see it.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hal/device.hpp"

namespace zehal::hal {

// A backend (a driver) and its devices.
class Backend {
public:
    virtual ~Backend() = default;
    // "level_zero", "cuda" or "sim".
    virtual std::string_view name() const = 0;
    // Its devices, in the driver's order.
    virtual const std::vector<DeviceRef>& devices() const = 0;
};

// What probing one backend found.
struct BackendStatus {
    std::string name;
    bool available = false;
    std::string reason{};                // why not available; empty when available
    std::shared_ptr<Backend> backend{};  // null when not available
};

}  // namespace zehal::hal
