#include "hal/level_zero/level_zero_backend.hpp"

#include <cstdint>
#include <string>

#include "common/dynlib.hpp"
#include "common/status.hpp"

namespace zehal::level_zero {

namespace {
// The two loader entry points the probe needs (C ABI of ze_api.h).
using ZeInitFn = ze_result_t (*)(uint32_t flags);
using ZeDriverGetFn = ze_result_t (*)(uint32_t* count, void** drivers);
constexpr uint32_t kInitGpuOnly = 1;
}  // namespace

hal::BackendStatus probe() {
    hal::BackendStatus status{.name = "level_zero"};
    DynLib lib = DynLib::open_first("libze_loader.so.1");
    if (!lib) {
        status.reason = lib.error();
        return status;
    }
    auto ze_init = lib.symbol<ZeInitFn>("zeInit");
    auto ze_driver_get = lib.symbol<ZeDriverGetFn>("zeDriverGet");
    if (!ze_init || !ze_driver_get) {
        status.reason = "libze_loader.so.1 lacks zeInit or zeDriverGet";
        return status;
    }
    if (ze_result_t r = ze_init(kInitGpuOnly); r != ZE_RESULT_SUCCESS) {
        status.reason = "zeInit failed: " + std::string(result_name(r));
        return status;
    }
    uint32_t drivers = 0;
    if (ze_result_t r = ze_driver_get(&drivers, nullptr); r != ZE_RESULT_SUCCESS || drivers == 0) {
        status.reason = r == ZE_RESULT_SUCCESS ? "no Level Zero GPU driver" : "zeDriverGet failed: " + std::string(result_name(r));
        return status;
    }
    status.reason = "a Level Zero GPU driver is present, but this build has no level_zero device backend yet";
    return status;
}

}  // namespace zehal::level_zero
