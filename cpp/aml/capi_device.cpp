// C API: zehal_device_get, and device handles as shared references.
#include <memory>

#include "aml/capi_handles.hpp"
#include "hal/device_handle.hpp"
#include "hal/registry.hpp"
#include "common/c_boundary.hpp"

namespace zehal::aml::capi {

hal::DeviceRef device_ref(zehal_device_t handle) noexcept {
    hal::Device* device = zehal::capi::device_from_handle(handle);
    if (!device) return nullptr;
    // Every device is owned by a shared_ptr (its backend's list, or whoever created it).
    return device->weak_from_this().lock();
}

}  // namespace zehal::aml::capi

extern "C" ze_result_t zehal_device_get(const char* backend, uint32_t index, zehal_device_t* device) {
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!device) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<zehal::hal::Backend> b;
        const ze_result_t r = backend ? zehal::hal::find_backend(backend, &b) : zehal::hal::default_backend(&b);
        if (r != ZE_RESULT_SUCCESS) return r;
        const auto& devices = b->devices();
        if (index >= devices.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        *device = zehal::capi::handle_from_device(devices[index].get());
        return ZE_RESULT_SUCCESS;
    });
}
