#include "hal/level_zero/ze_context.hpp"

#include <cstdlib>
#include <cstring>

namespace zehal::level_zero {

namespace {

// ZEHAL_LEVEL_ZERO_EXTENSIONS=0 leaves every extension function unresolved: the core
// fallbacks then serve (tests run them so; a user may for a driver whose extension fails).
bool extensions_disabled() {
    const char* v = std::getenv("ZEHAL_LEVEL_ZERO_EXTENSIONS");
    return v && std::strcmp(v, "0") == 0;
}

// The extension function `name` of `driver` as F, or null with *why.
template <typename F>
F extension(const ZeApi& api, ze_driver_handle_t driver, const char* name, std::string* why) {
    if (extensions_disabled()) {
        *why = std::string(name) + " not resolved: ZEHAL_LEVEL_ZERO_EXTENSIONS=0";
        return nullptr;
    }
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
        d->list_host_synchronize = extension<ZeCommandListHostSynchronizeFn>(api, driver,
                                                                             "zeCommandListHostSynchronize", &ignored);
    }
    return d;
}

}  // namespace zehal::level_zero
