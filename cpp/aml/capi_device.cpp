// C API: zehal_device_get, _count, _get_properties, and device handles as shared references.
#include <algorithm>
#include <cstring>
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

extern "C" ze_result_t zehal_device_count(const char* backend, uint32_t* count) {
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<zehal::hal::Backend> b;
        const ze_result_t r = backend ? zehal::hal::find_backend(backend, &b) : zehal::hal::default_backend(&b);
        if (r != ZE_RESULT_SUCCESS) return r;
        *count = static_cast<uint32_t>(b->devices().size());
        return ZE_RESULT_SUCCESS;
    });
}

extern "C" ze_result_t zehal_device_get_properties(zehal_device_t device, zehal_device_properties_t* properties) {
    return zehal::ze_guarded([&]() -> ze_result_t {
        const zehal::hal::Device* d = zehal::capi::device_from_handle(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const zehal::hal::DeviceProperties& p = d->properties();
        zehal_device_properties_t out{};
        std::memcpy(out.name, p.name.data(), std::min(p.name.size(), sizeof out.name - 1));
        const std::string_view backend = d->backend_name();
        std::memcpy(out.backend, backend.data(), std::min(backend.size(), sizeof out.backend - 1));
        std::copy(p.uuid.begin(), p.uuid.end(), out.uuid);
        out.memory_bytes = p.memory_bytes;
        out.max_allocation_bytes = p.max_allocation_bytes;
        out.timer_hz = p.timer_hz;
        out.kernel_timestamp_valid_bits = p.kernel_timestamp_valid_bits;
        out.timestamp_valid_bits = p.timestamp_valid_bits;
        out.compute_engines = p.compute_engines;
        out.copy_engines = p.copy_engines;
        out.subdevices = p.subdevices;
        out.timestamp_flags = p.timestamp_flags;
        out.dma_buf_export = p.dma_buf_export ? 1 : 0;
        out.tracer = p.tracer ? 1 : 0;
        *properties = out;
        return ZE_RESULT_SUCCESS;
    });
}
