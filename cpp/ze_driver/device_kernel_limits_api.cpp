// What a device offers kernels and images: zehal's devices run no modules and hold no
// images, and these properties say so in the specification's own terms.
#include <cstring>

#include "chain.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// No SPIR-V (version 0: "not supported"), so no kernel arguments, printf buffer or native
// kernels. fp32flags is the one capability the specification requires of every device:
// it names the least any device's single precision offers (round to nearest, INF and NaN),
// and fp16 and fp64 are absent; every floating-point atomic flag is clear.
ze_result_t zeDeviceGetModuleProperties_(ze_device_handle_t hDevice, ze_device_module_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        p->spirvVersionSupported = 0;
        p->flags = 0;
        p->fp16flags = 0;
        p->fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN;
        p->fp64flags = 0;
        p->maxArgumentsSize = 0;
        p->printfBufferSize = 0;
        std::memset(p->nativeKernelSupported.id, 0, sizeof p->nativeKernelSupported.id);
        if (auto* atomics = find_in_chain<ze_float_atomic_ext_properties_t>(
                p, {ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES}, ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES))
            atomics->fp16Flags = atomics->fp32Flags = atomics->fp64Flags = 0;
        return ZE_RESULT_SUCCESS;
    });
}

// Every limit 0: the specification's "unsupported" for 1D, 2D, 3D and buffer images, image
// arrays, samplers and image arguments.
ze_result_t zeDeviceGetImageProperties_(ze_device_handle_t hDevice, ze_device_image_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        p->maxImageDims1D = p->maxImageDims2D = p->maxImageDims3D = 0;
        p->maxImageBufferSize = 0;
        p->maxImageArraySlices = 0;
        p->maxSamplers = 0;
        p->maxReadImageArgs = p->maxWriteImageArgs = 0;
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeDeviceGetModuleProperties, zeDeviceGetModuleProperties_),
    ZEHAL_ENTRY(zeDeviceGetImageProperties, zeDeviceGetImageProperties_),
};

}  // namespace

std::span<const Entry> device_kernel_limits_entries() { return kEntries; }

}  // namespace zehal::ze_driver
