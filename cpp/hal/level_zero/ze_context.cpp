#include "hal/level_zero/ze_context.hpp"

namespace zehal::level_zero {

namespace {

// The extension function `name` of `driver` as F, or null with *why.
template <typename F>
F extension(const ZeApi& api, ze_driver_handle_t driver, const char* name, std::string* why) {
    void* address = nullptr;
    const ze_result_t r = api.zeDriverGetExtensionFunctionAddress(driver, name, &address);
    if (r != ZE_RESULT_SUCCESS || !address) {
        *why = std::string("the Level Zero driver does not provide ") + name + " (" + result_text(r) + ")";
        return nullptr;
    }
    return reinterpret_cast<F>(address);
}

}  // namespace

std::shared_ptr<DriverContext> open_driver(const ZeApi& api, ze_driver_handle_t driver,
                                           std::shared_ptr<HostMemory> host, std::string* why) {
    auto d = std::make_shared<DriverContext>(api);
    d->driver = driver;
    d->host = std::move(host);
    ze_context_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC;
    if (ze_result_t r = api.zeContextCreate(driver, &desc, &d->context); r != ZE_RESULT_SUCCESS) {
        *why = "zeContextCreate failed: " + result_text(r);
        return nullptr;
    }
    d->query_timestamps_ext = extension<ZeEventQueryKernelTimestampsExtFn>(
        api, driver, "zeEventQueryKernelTimestampsExt", &d->timestamps_ext_why);
    d->list_host_synchronize = api.zeCommandListHostSynchronize;
    if (!d->list_host_synchronize) {
        std::string ignored;
        d->list_host_synchronize =
            extension<ZeCommandListHostSynchronizeFn>(api, driver, "zeCommandListHostSynchronize", &ignored);
    }
    return d;
}

}  // namespace zehal::level_zero
