// C API: zehal_device_get, _count, _get_properties, _can_access_peer, _get_peer_properties,
// zehal_backend_get, _get_default, and device handles as shared references.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string_view>

#include "common/api_call_log.hpp"
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

namespace {

// Copies `text` into `out` (`size` bytes), cut to fit, zero-terminated.
void copy_string(std::string_view text, char* out, size_t size) {
    const size_t n = std::min(text.size(), size - 1);
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
}

// The backend a C caller names (NULL: the default one), as zehal_device_get documents.
ze_result_t backend_named(const char* name, std::shared_ptr<zehal::hal::Backend>* out) {
    return name ? zehal::hal::find_backend(name, out) : zehal::hal::default_backend(out);
}

}  // namespace

extern "C" ze_result_t zehal_device_get(const char* backend, uint32_t index, zehal_device_t* device) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!device) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<zehal::hal::Backend> b;
        if (ze_result_t r = backend_named(backend, &b); r != ZE_RESULT_SUCCESS) return r;
        const auto& devices = b->devices();
        if (index >= devices.size()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        *device = zehal::capi::handle_from_device(devices[index].get());
        return ZE_RESULT_SUCCESS;
    });
}

extern "C" ze_result_t zehal_device_count(const char* backend, uint32_t* count) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<zehal::hal::Backend> b;
        if (ze_result_t r = backend_named(backend, &b); r != ZE_RESULT_SUCCESS) return r;
        *count = static_cast<uint32_t>(b->devices().size());
        return ZE_RESULT_SUCCESS;
    });
}

extern "C" ze_result_t zehal_device_can_access_peer(zehal_device_t device, zehal_device_t peer, uint8_t* value) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        const zehal::hal::Device* d = zehal::capi::device_from_handle(device);
        const zehal::hal::Device* p = zehal::capi::device_from_handle(peer);
        if (!d || !p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!value) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *value = d->can_access_peer(*p) ? 1 : 0;
        return ZE_RESULT_SUCCESS;
    });
}

extern "C" ze_result_t zehal_device_get_peer_properties(zehal_device_t device, zehal_device_t peer,
                                                        zehal_peer_properties_t* properties) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        const zehal::hal::Device* d = zehal::capi::device_from_handle(device);
        const zehal::hal::Device* p = zehal::capi::device_from_handle(peer);
        if (!d || !p) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        zehal::hal::PeerProperties got;
        if (ze_result_t r = d->peer_properties(*p, &got); r != ZE_RESULT_SUCCESS) return r;
        properties->access = got.access ? 1 : 0;
        properties->atomics = got.atomics ? 1 : 0;
        properties->bandwidth_bytes_per_s = got.bandwidth_bytes_per_s;
        return ZE_RESULT_SUCCESS;
    });
}

extern "C" ze_result_t zehal_device_get_properties(zehal_device_t device, zehal_device_properties_t* properties) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        const zehal::hal::Device* d = zehal::capi::device_from_handle(device);
        if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const zehal::hal::DeviceProperties& p = d->properties();
        zehal_device_properties_t out{};
        copy_string(p.name, out.name, sizeof out.name);
        copy_string(d->backend_name(), out.backend, sizeof out.backend);
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

extern "C" ze_result_t zehal_backend_get(uint32_t* count, zehal_backend_properties_t* backends) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const auto& all = zehal::hal::backends();
        if (*count == 0) {
            *count = static_cast<uint32_t>(all.size());
            return ZE_RESULT_SUCCESS;
        }
        if (!backends) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const uint32_t n = std::min(*count, static_cast<uint32_t>(all.size()));
        for (uint32_t i = 0; i < n; ++i) {
            zehal_backend_properties_t out{};
            copy_string(all[i].name, out.name, sizeof out.name);
            copy_string(all[i].reason, out.reason, sizeof out.reason);
            out.available = all[i].available ? 1 : 0;
            out.device_count = all[i].available ? static_cast<uint32_t>(all[i].backend->devices().size()) : 0;
            backends[i] = out;
        }
        *count = n;
        return ZE_RESULT_SUCCESS;
    });
}

extern "C" ze_result_t zehal_backend_get_default(char name[ZEHAL_MAX_BACKEND_NAME]) {
    ZEHAL_TIMED_API_CALL();
    return zehal::ze_guarded([&]() -> ze_result_t {
        if (!name) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::shared_ptr<zehal::hal::Backend> b;
        if (const ze_result_t r = zehal::hal::default_backend(&b); r != ZE_RESULT_SUCCESS) return r;
        copy_string(b->name(), name, ZEHAL_MAX_BACKEND_NAME);
        return ZE_RESULT_SUCCESS;
    });
}
