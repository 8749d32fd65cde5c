// What a device offers kernels and images, in the specification's own terms: the module
// formats and limits of the HAL device; zehal's devices hold no images.
#include <cstring>

#include "chain.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "hal/module.hpp"
#include "compiler/float_atomics.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

constexpr uint32_t kMaxArgumentsBytes = 1024;  // OpenCL's CL_DEVICE_MAX_PARAMETER_SIZE minimum

// SPIR-V up to 1.4 (what the SPIRV-LLVM-Translator of LLVM 15 reads) on a device that
// builds SPIR-V modules, else version 0 ("not supported"). fp32flags is the one capability
// the specification requires of every device: the least any device's single precision
// offers (round to nearest, INF and NaN); fp16, fp64 and the optional module flags are not
// claimed. The floating-point atomics (ze_float_atomic_ext_properties_t) are the HAL
// device's: what the compiler lowers on sim and CUDA, the driver's own on level_zero.
// maxArgumentsSize is OpenCL's minimum for kernel arguments, which every backend of zehal
// passes; no printf buffer exists.
ze_result_t zeDeviceGetModuleProperties_(ze_device_handle_t hDevice, ze_device_module_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const hal::DeviceProperties& hp = d->device->properties();
        const bool spirv = hp.module_formats & (1u << static_cast<uint32_t>(hal::ModuleFormat::spirv));
        const bool kernels = hp.module_formats != 0;
        p->spirvVersionSupported = spirv ? ZE_MAKE_VERSION(1, 4) : 0;
        p->flags = 0;
        p->fp16flags = 0;
        p->fp32flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_INF_NAN;
        p->fp64flags = 0;
        p->maxArgumentsSize = kernels ? kMaxArgumentsBytes : 0;
        p->printfBufferSize = 0;
        std::memset(p->nativeKernelSupported.id, 0, sizeof p->nativeKernelSupported.id);
        static_assert(compiler::kFpAtomicGlobalLoadStore == ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_LOAD_STORE &&
                          compiler::kFpAtomicGlobalAdd == ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD &&
                          compiler::kFpAtomicGlobalMinMax == ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_MIN_MAX &&
                          compiler::kFpAtomicLocalLoadStore == ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_LOAD_STORE &&
                          compiler::kFpAtomicLocalAdd == ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD &&
                          compiler::kFpAtomicLocalMinMax == ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_MIN_MAX,
                      "the HAL's float-atomic flags are Level Zero's bits");
        if (auto* atomics = find_in_chain<ze_float_atomic_ext_properties_t>(
                p, {ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES}, ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES)) {
            atomics->fp16Flags = hp.fp16_atomics;
            atomics->fp32Flags = hp.fp32_atomics;
            atomics->fp64Flags = hp.fp64_atomics;
        }
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
