#include "hal/registry.hpp"

#include <cstdlib>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "hal/cuda/cuda_backend.hpp"
#include "hal/level_zero/level_zero_backend.hpp"
#include "hal/sim/sim_backend.hpp"

namespace zehal::hal {
namespace {

// The devices announced so far and who watches for more (watch_devices).
struct Watchers {
    std::mutex mu;
    std::vector<std::tuple<std::weak_ptr<Device>, std::string, uint32_t>> devices;  // not kept alive here
    std::vector<DeviceWatch> watches;
};

Watchers& watchers() {
    static auto* w = new Watchers;  // never destroyed: a probe may run until the process exits
    return *w;
}

// Tells the watchers of the devices of a backend just probed; returns its status.
BackendStatus announced(BackendStatus status) {
    if (!status.available) return status;
    Watchers& w = watchers();
    std::lock_guard lock(w.mu);
    const auto& devices = status.backend->devices();
    for (uint32_t i = 0; i < devices.size(); ++i) {
        w.devices.emplace_back(devices[i], status.name, i);
        for (const DeviceWatch& watch : w.watches) watch(devices[i], status.name, i);
    }
    return status;
}

// A backend's status, probed on first use. Each backend has its own once-flag: the
// level_zero probe loads zehal's own driver, which reaches cuda's and sim's on the same
// thread (a shared flag would wait for itself there).
template <BackendStatus (*Probe)()>
const BackendStatus& probed() {
    static const BackendStatus status = announced(Probe());
    return status;
}

}  // namespace

const std::vector<BackendStatus>& backends() {
    // Function-local statics are initialised thread-safely, once.
    static const std::vector<BackendStatus> all{probed<level_zero::probe>(), probed<cuda::probe>(),
                                                probed<sim::probe>()};
    return all;
}

std::vector<BackendStatus> native_backends() { return {probed<cuda::probe>(), probed<sim::probe>()}; }

ze_result_t find_backend(std::string_view name, std::shared_ptr<Backend>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (const BackendStatus& b : backends()) {
        if (b.name != name) continue;
        if (!b.available) return ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE;
        *out = b.backend;
        return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t default_backend(std::shared_ptr<Backend>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (const char* forced = std::getenv("ZEHAL_BACKEND"); forced && *forced) return find_backend(forced, out);
    for (const BackendStatus& b : backends()) {
        if (b.available && !b.backend->devices().empty()) {
            *out = b.backend;
            return ZE_RESULT_SUCCESS;
        }
    }
    return ZE_RESULT_ERROR_UNINITIALIZED;
}

ze_result_t default_device(DeviceRef* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::shared_ptr<Backend> backend;
    if (ze_result_t r = default_backend(&backend); r != ZE_RESULT_SUCCESS) return r;
    if (backend->devices().empty()) return ZE_RESULT_ERROR_UNINITIALIZED;
    *out = backend->devices().front();
    return ZE_RESULT_SUCCESS;
}

void watch_devices(DeviceWatch watch) {
    Watchers& w = watchers();
    std::lock_guard lock(w.mu);
    for (const auto& [device, backend, index] : w.devices)
        if (const DeviceRef live = device.lock()) watch(live, backend, index);
    w.watches.push_back(std::move(watch));
}

}  // namespace zehal::hal
