// The SPIR-V kernels of tests/kernels, as the build wrote them (ZEHAL_SPIRV_KERNEL_DIR), for
// the driver's tests of modules and kernels.
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace zetest {

// Whether `device` builds SPIR-V modules (zehal built with its kernel compiler).
inline bool builds_spirv(ze_device_handle_t device) {
    ze_device_module_properties_t mp{};
    mp.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    return zeDeviceGetModuleProperties(device, &mp) == ZE_RESULT_SUCCESS && mp.spirvVersionSupported != 0;
}

// The SPIR-V of tests/kernels' `name`.cl; empty when the build wrote none.
inline std::vector<uint8_t> spirv_kernel(const std::string& name) {
    std::ifstream file(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/" + name + ".spv", std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// zeModuleCreate of `spirv` on `device`, built with `flags`.
inline ze_result_t create_spirv_module(ze_context_handle_t context, ze_device_handle_t device,
                                       const std::vector<uint8_t>& spirv, const char* flags, ze_module_handle_t* out) {
    ze_module_desc_t md{
        ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV, spirv.size(), spirv.data(), flags, nullptr};
    return zeModuleCreate(context, device, &md, out, nullptr);
}

}  // namespace zetest
