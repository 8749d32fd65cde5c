#include "hal/registry.hpp"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "hal/cuda/cuda_backend.hpp"
#include "hal/level_zero/level_zero_backend.hpp"
#include "hal/sim/sim_backend.hpp"

namespace zehal::hal {
namespace {
// Set once by exclude_level_zero before the probe; the probe reads it (acquire/release:
// a driver's exclusion happens-before its own first probe).
std::atomic<bool> level_zero_excluded{false};
std::atomic<bool> probed{false};

BackendStatus excluded_level_zero() {
    return {.name = "level_zero", .reason = "not probed inside zehal's own Level Zero driver"};
}
}  // namespace

bool exclude_level_zero() {
    level_zero_excluded.store(true, std::memory_order_release);
    return !probed.load(std::memory_order_acquire);
}

const std::vector<BackendStatus>& backends() {
    // Probed once, in registry order; function-local statics are initialised thread-safely.
    static const std::vector<BackendStatus> all = [] {
        probed.store(true, std::memory_order_release);
        std::vector<BackendStatus> v;
        v.push_back(level_zero_excluded.load(std::memory_order_acquire) ? excluded_level_zero() : level_zero::probe());
        v.push_back(cuda::probe());
        v.push_back(sim::probe());
        return v;
    }();
    return all;
}

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

}  // namespace zehal::hal
