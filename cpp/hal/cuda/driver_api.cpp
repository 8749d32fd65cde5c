#include "hal/cuda/driver_api.hpp"

#include "common/dynlib.hpp"

namespace zehal::cuda {

namespace {

// What loading found: the table, or why there is none. Created once and never destroyed:
// libcuda stays loaded until the process exits, as the CUDA runtime keeps it.
struct Loaded {
    DynLib lib;
    DriverApi api;
    bool ok = false;
    std::string why;
};

// The exported name of a declared function: its plain name after cuda.h's macros.
#define ZEHAL_CUDA_SYMBOL_NAME(name) ZEHAL_CUDA_STRINGIZE(name)
#define ZEHAL_CUDA_STRINGIZE(name) #name

Loaded* load() {
    auto* l = new Loaded{};
    l->lib = DynLib::open_first("libcuda.so.1");
    if (!l->lib) {
        l->why = "libcuda.so.1 not found (no NVIDIA driver): " + l->lib.error();
        return l;
    }
    std::string missing;
#define ZEHAL_CUDA_RESOLVE(name)                                                      \
    l->api.name = l->lib.symbol<decltype(l->api.name)>(ZEHAL_CUDA_SYMBOL_NAME(name)); \
    if (!l->api.name) missing += (missing.empty() ? "" : ", ") + std::string(ZEHAL_CUDA_SYMBOL_NAME(name));
    ZEHAL_CUDA_DRIVER_FUNCTIONS(ZEHAL_CUDA_RESOLVE)
#undef ZEHAL_CUDA_RESOLVE
#define ZEHAL_CUDA_RESOLVE_OPTIONAL(name) \
    l->api.name = l->lib.symbol<decltype(l->api.name)>(ZEHAL_CUDA_SYMBOL_NAME(name));
    ZEHAL_CUDA_OPTIONAL_FUNCTIONS(ZEHAL_CUDA_RESOLVE_OPTIONAL)
#undef ZEHAL_CUDA_RESOLVE_OPTIONAL
    if (!missing.empty()) {
        l->why = "the NVIDIA driver is older than this build's CUDA headers (it lacks " + missing + ")";
        return l;
    }
    if (CUresult r = l->api.cuInit(0); r != CUDA_SUCCESS) {
        l->why = "cuInit failed: " + error_name(l->api, r);
        return l;
    }
    l->ok = true;
    return l;
}

}  // namespace

const DriverApi* driver_api(std::string* why) {
    // Function-local static: initialised once, thread-safely.
    static Loaded* const loaded = load();
    if (!loaded->ok) {
        if (why) *why = loaded->why;
        return nullptr;
    }
    return &loaded->api;
}

bool is_device_lost(CUresult r) noexcept {
    switch (r) {
        case CUDA_ERROR_LAUNCH_FAILED:
        case CUDA_ERROR_ILLEGAL_ADDRESS:
        case CUDA_ERROR_HARDWARE_STACK_ERROR:
        case CUDA_ERROR_ILLEGAL_INSTRUCTION:
        case CUDA_ERROR_MISALIGNED_ADDRESS:
        case CUDA_ERROR_INVALID_ADDRESS_SPACE:
        case CUDA_ERROR_INVALID_PC:
        case CUDA_ERROR_LAUNCH_TIMEOUT:
        case CUDA_ERROR_ECC_UNCORRECTABLE:
        case CUDA_ERROR_CONTEXT_IS_DESTROYED:
        case CUDA_ERROR_DEVICE_UNAVAILABLE:
        case CUDA_ERROR_ASSERT:
            return true;
        default:
            return false;
    }
}

ze_result_t to_ze_result(CUresult r) noexcept {
    if (is_device_lost(r)) return ZE_RESULT_ERROR_DEVICE_LOST;
    switch (r) {
        case CUDA_SUCCESS:
            return ZE_RESULT_SUCCESS;
        case CUDA_ERROR_NOT_READY:
            return ZE_RESULT_NOT_READY;
        case CUDA_ERROR_OUT_OF_MEMORY:
            return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
        case CUDA_ERROR_INVALID_VALUE:
        case CUDA_ERROR_INVALID_HANDLE:
        case CUDA_ERROR_INVALID_CONTEXT:
        case CUDA_ERROR_INVALID_DEVICE:
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        case CUDA_ERROR_NOT_SUPPORTED:
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        case CUDA_ERROR_NOT_INITIALIZED:
        case CUDA_ERROR_DEINITIALIZED:
        case CUDA_ERROR_NO_DEVICE:
            return ZE_RESULT_ERROR_UNINITIALIZED;
        default:
            return ZE_RESULT_ERROR_UNKNOWN;
    }
}

std::string error_name(const DriverApi& api, CUresult r) {
    const char* name = nullptr;
    if (api.cuGetErrorName && api.cuGetErrorName(r, &name) == CUDA_SUCCESS && name) return name;
    return "CUresult " + std::to_string(static_cast<int>(r));
}

}  // namespace zehal::cuda
