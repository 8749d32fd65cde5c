#include "objects.hpp"

#include <algorithm>

#include "command_list.hpp"
#include "device_selection.hpp"
#include "kernel_object.hpp"
#include "hal/registry.hpp"

namespace zehal::ze_driver {
namespace {

struct DriverState {
    std::once_flag once;
    ze_result_t result = ZE_RESULT_ERROR_UNINITIALIZED;
    DriverObject driver;
};

DriverState& state() {
    static auto* s = new DriverState;  // used until the process exits
    return *s;
}

// Every device of every available backend but level_zero, in registry order, that the
// affinity mask selects. The level_zero backend (the loader, which may be loading this
// driver) is never probed here.
ze_result_t build(DriverObject* driver) {
    const std::string_view mask = affinity_mask();
    uint32_t listed = 0;
    for (const hal::BackendStatus& b : hal::native_backends()) {
        if (!b.available) continue;
        for (const hal::DeviceRef& d : b.backend->devices()) {
            if (!affinity_selects(mask, listed++)) continue;
            auto object = std::make_unique<DeviceObject>();
            object->device = d;
            object->index = static_cast<uint32_t>(driver->devices.size());
            driver->devices.push_back(std::move(object));
        }
    }
    return driver->devices.empty() ? ZE_RESULT_ERROR_UNINITIALIZED : ZE_RESULT_SUCCESS;
}

template <typename T>
HandleTable<T>& table() {
    static auto* t = new HandleTable<T>(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);  // used until the process exits
    return *t;
}

}  // namespace

ze_result_t initialize() {
    DriverState& s = state();
    std::call_once(s.once, [&] { s.result = build(&s.driver); });
    return s.result;
}

DriverObject* driver() {
    DriverState& s = state();
    return s.result == ZE_RESULT_SUCCESS ? &s.driver : nullptr;
}

ze_result_t driver_of(ze_driver_handle_t handle, DriverObject** out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    DriverObject* d = driver();
    if (!d) return ZE_RESULT_ERROR_UNINITIALIZED;
    if (reinterpret_cast<DriverObject*>(handle) != d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    *out = d;
    return ZE_RESULT_SUCCESS;
}

ze_result_t device_of(ze_device_handle_t handle, DeviceObject** out) {
    if (!handle) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    DriverObject* d = driver();
    if (!d) return ZE_RESULT_ERROR_UNINITIALIZED;
    for (const auto& device : d->devices) {
        if (handle_of(device.get()) == handle) {
            *out = device.get();
            return ZE_RESULT_SUCCESS;
        }
    }
    return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
}

DeviceObject* owner_of(const void* ptr, hal::PointerInfo* info) {
    DriverObject* d = driver();
    if (!d || !ptr) return nullptr;
    for (const auto& device : d->devices)
        if (device->device->pointer_info(ptr, info) == ZE_RESULT_SUCCESS) return device.get();
    return nullptr;
}

HandleTable<ContextObject>& contexts() { return table<ContextObject>(); }
HandleTable<EventPoolObject>& event_pools() { return table<EventPoolObject>(); }
HandleTable<EventObject>& events() { return table<EventObject>(); }
HandleTable<QueueObject>& queues() { return table<QueueObject>(); }
HandleTable<CommandListObject>& command_lists() { return table<CommandListObject>(); }
HandleTable<FenceObject>& fences() { return table<FenceObject>(); }
HandleTable<TracerObject>& tracers() { return table<TracerObject>(); }
HandleTable<DecoderObject>& decoders() { return table<DecoderObject>(); }
HandleTable<ModuleObject>& modules() { return table<ModuleObject>(); }
HandleTable<BuildLogObject>& build_logs() { return table<BuildLogObject>(); }
HandleTable<KernelObject>& kernels() { return table<KernelObject>(); }

ze_result_t optional_event(ze_event_handle_t handle, hal::EventRef* out) {
    if (!handle) {
        out->reset();
        return ZE_RESULT_SUCCESS;
    }
    std::shared_ptr<EventObject> e;
    if (ze_result_t r = events().get(handle, &e); r != ZE_RESULT_SUCCESS) return r;
    *out = e->event;
    return ZE_RESULT_SUCCESS;
}

ze_result_t notification_event(ze_event_handle_t handle, const DeviceObject* device, metrics::Notification* out) {
    *out = metrics::Notification();
    if (!handle) return ZE_RESULT_SUCCESS;
    std::shared_ptr<EventObject> e;
    if (ze_result_t r = events().get(handle, &e); r != ZE_RESULT_SUCCESS) return r;
    const bool made_for = std::find(e->made_for.begin(), e->made_for.end(), device) != e->made_for.end();
    *out = metrics::Notification(e->event, made_for);
    return ZE_RESULT_SUCCESS;
}

ze_result_t wait_list(uint32_t count, ze_event_handle_t* handles, std::vector<hal::EventRef>* out) {
    out->clear();
    if (count == 0) return ZE_RESULT_SUCCESS;
    if (!handles) return ZE_RESULT_ERROR_INVALID_SIZE;
    out->reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
        if (!handles[i]) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        hal::EventRef e;
        if (ze_result_t r = optional_event(handles[i], &e); r != ZE_RESULT_SUCCESS) return r;
        out->push_back(std::move(e));
    }
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::ze_driver
