#include "hal/registry.hpp"

#include <cstdlib>

#include "hal/cuda/cuda_backend.hpp"
#include "hal/level_zero/level_zero_backend.hpp"
#include "hal/sim/sim_backend.hpp"

namespace zehal::hal {
namespace {

// A backend's status, probed on first use. Each backend has its own once-flag: the
// level_zero probe loads zehal's own driver, which reaches cuda's and sim's on the same
// thread (a shared flag would wait for itself there).
template <BackendStatus (*Probe)()>
const BackendStatus& probed() {
    static const BackendStatus status = Probe();
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

}  // namespace zehal::hal
