#include "hal/level_zero/level_zero_backend.hpp"

#include <string>
#include <vector>

#ifdef ZEHAL_HAVE_LEVEL_ZERO_H
#include "hal/level_zero/level_zero_device.hpp"
#include "hal/level_zero/ze_api.hpp"
#include "hal/level_zero/ze_context.hpp"
#endif

namespace zehal::level_zero {

#ifdef ZEHAL_HAVE_LEVEL_ZERO_H
namespace {

class ZeBackend final : public hal::Backend {
public:
    explicit ZeBackend(std::vector<hal::DeviceRef> devices) : devices_(std::move(devices)) {}
    std::string_view name() const override { return "level_zero"; }
    const std::vector<hal::DeviceRef>& devices() const override { return devices_; }

private:
    std::vector<hal::DeviceRef> devices_;
};

// The GPU devices of `driver` into *devices; *why says why one was left out.
void add_devices(const ZeApi& api, const std::shared_ptr<DriverContext>& driver, std::vector<hal::DeviceRef>* devices,
                 std::string* why) {
    uint32_t count = 0;
    ze_result_t r = api.zeDeviceGet(driver->driver, &count, nullptr);
    std::vector<ze_device_handle_t> handles(count);
    if (r == ZE_RESULT_SUCCESS && count) r = api.zeDeviceGet(driver->driver, &count, handles.data());
    if (r != ZE_RESULT_SUCCESS) {
        *why = "zeDeviceGet failed: " + result_text(r);
        return;
    }
    if (count == 0) *why = "the Level Zero driver has no device";
    for (uint32_t i = 0; i < count; ++i) {
        auto device = std::make_shared<ZeDevice>(driver, handles[i]);
        if (device->describe(why)) devices->push_back(std::move(device));
    }
}

}  // namespace

hal::BackendStatus probe() {
    hal::BackendStatus status{.name = "level_zero"};
    std::string why;
    const ZeApi* api = ze_api(&why);
    if (!api) {
        status.reason = why;
        return status;
    }
    uint32_t count = 0;
    ze_result_t r = api->zeDriverGet(&count, nullptr);
    std::vector<ze_driver_handle_t> drivers(count);
    if (r == ZE_RESULT_SUCCESS && count) r = api->zeDriverGet(&count, drivers.data());
    if (r != ZE_RESULT_SUCCESS || count == 0) {
        status.reason = r == ZE_RESULT_SUCCESS ? "no Level Zero GPU driver" : "zeDriverGet failed: " + result_text(r);
        return status;
    }
    auto host = std::make_shared<HostMemory>();
    std::vector<hal::DeviceRef> devices;
    for (ze_driver_handle_t handle : drivers) {
        if (auto driver = open_driver(*api, handle, host, &why)) add_devices(*api, driver, &devices, &why);
    }
    if (devices.empty()) {
        status.reason = why.empty() ? "no Level Zero GPU device" : why;
        return status;
    }
    // The devices (their contexts, lists and memory) live until the process exits: the
    // driver may already be unloading when static destructors run.
    static auto* const kept = new std::vector<hal::DeviceRef>();
    kept->insert(kept->end(), devices.begin(), devices.end());
    status.available = true;
    status.backend = std::make_shared<ZeBackend>(std::move(devices));
    return status;
}

#else

hal::BackendStatus probe() {
    hal::BackendStatus status{.name = "level_zero"};
    status.reason = "built without Level Zero headers (level_zero/ze_api.h was not found at build time)";
    return status;
}

#endif

}  // namespace zehal::level_zero
