#include "hal/level_zero/ze_api.hpp"

#include <cstdlib>
#include <mutex>

#include "common/dynlib.hpp"
#include "common/status.hpp"

namespace zehal::level_zero {

namespace {

// The loader to open: ZEHAL_LEVEL_ZERO_LOADER when set (a loader unpacked elsewhere, or a
// missing one in tests), else the soname.
const char* loader_name() {
    const char* path = std::getenv("ZEHAL_LEVEL_ZERO_LOADER");
    return path && *path ? path : "libze_loader.so.1";
}

// Loads the table from `lib`; false with *why naming the first missing entry point.
bool resolve(const DynLib& lib, ZeApi* api, std::string* why) {
#define ZEHAL_ZE_RESOLVE(name)                               \
    api->name = lib.symbol<decltype(&::name)>(#name);        \
    if (!api->name) {                                        \
        *why = std::string(loader_name()) + " lacks " #name; \
        return false;                                        \
    }
    ZEHAL_ZE_CORE_FUNCTIONS(ZEHAL_ZE_RESOLVE)
#undef ZEHAL_ZE_RESOLVE
    api->zeCommandListHostSynchronize = lib.symbol<ZeCommandListHostSynchronizeFn>("zeCommandListHostSynchronize");
    api->zeMemFreeExt = lib.symbol<decltype(&::zeMemFreeExt)>("zeMemFreeExt");
    api->zeKernelSetGlobalOffsetExp = lib.symbol<decltype(&::zeKernelSetGlobalOffsetExp)>("zeKernelSetGlobalOffsetExp");
    return true;
}

}  // namespace

std::string result_text(ze_result_t r) { return std::string(result_name(r)); }

const ZeApi* ze_api(std::string* why) {
    static std::once_flag once;
    static const ZeApi* table = nullptr;
    static std::string failure;
    std::call_once(once, [] {
        // The loader stays open until the process exits: devices made from it live as
        // long, and a loader that zeInit touched is not unloaded.
        static DynLib* const lib = new DynLib(DynLib::open_first(loader_name()));
        if (!*lib) {
            failure = "cannot open the Level Zero loader: " + lib->error();
            return;
        }
        auto* api = new ZeApi();
        if (!resolve(*lib, api, &failure)) {
            delete api;
            return;
        }
        if (ze_result_t r = api->zeInit(ZE_INIT_FLAG_GPU_ONLY); r != ZE_RESULT_SUCCESS) {
            failure = "zeInit(ZE_INIT_FLAG_GPU_ONLY) failed: " + result_text(r) + " (no Level Zero GPU driver)";
            delete api;
            return;
        }
        table = api;
    });
    if (!table && why) *why = failure;
    return table;
}

}  // namespace zehal::level_zero
