// The raw CUDA side of the CUDA benchmarks (and of tests that play another library using the
// driver): the C ABI of cuda.h's few types and the driver entry points they call, resolved
// at run time (zehal builds without linking CUDA).
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "common/dynlib.hpp"

namespace zehal::bench {

using CUresult = int;
using CUdevice = int;
using CUcontext = void*;
using CUstream = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUdeviceptr = unsigned long long;
using CUmemoryPool = void*;
constexpr CUresult kCudaSuccess = 0;
constexpr CUresult kCudaErrorNotReady = 600;
constexpr unsigned kStreamNonBlocking = 1;

// The driver entry points the baselines call, resolved from libcuda.so.1.
struct RawCuda {
    DynLib lib;
    CUresult (*cuDeviceGetCount)(int*) = nullptr;
    CUresult (*cuDeviceGet)(CUdevice*, int) = nullptr;
    CUresult (*cuDeviceGetUuid)(unsigned char*, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRetain)(CUcontext*, CUdevice) = nullptr;
    CUresult (*cuDevicePrimaryCtxRelease)(CUdevice) = nullptr;
    CUresult (*cuCtxPushCurrent)(CUcontext) = nullptr;
    CUresult (*cuCtxPopCurrent)(CUcontext*) = nullptr;
    CUresult (*cuStreamCreate)(CUstream*, unsigned) = nullptr;
    CUresult (*cuStreamDestroy)(CUstream) = nullptr;
    CUresult (*cuStreamSynchronize)(CUstream) = nullptr;
    CUresult (*cuStreamQuery)(CUstream) = nullptr;
    CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream) = nullptr;
    CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void*, size_t, CUstream) = nullptr;
    CUresult (*cuMemAlloc)(CUdeviceptr*, size_t) = nullptr;
    CUresult (*cuMemAllocManaged)(CUdeviceptr*, size_t, unsigned) = nullptr;
    CUresult (*cuMemFree)(CUdeviceptr) = nullptr;
    CUresult (*cuDeviceGetDefaultMemPool)(CUmemoryPool*, CUdevice) = nullptr;
    CUresult (*cuMemAllocFromPoolAsync)(CUdeviceptr*, size_t, CUmemoryPool, CUstream) = nullptr;
    CUresult (*cuMemFreeAsync)(CUdeviceptr, CUstream) = nullptr;
    CUresult (*cuModuleLoadData)(CUmodule*, const void*) = nullptr;
    CUresult (*cuModuleUnload)(CUmodule) = nullptr;
    CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
    CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                               CUstream, void**, void**) = nullptr;
    CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned) = nullptr;
    CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream) = nullptr;

    // False when the library or one of the entry points is missing.
    bool load() {
        lib = DynLib::open_first("libcuda.so.1");
        bool ok = static_cast<bool>(lib);
        // By the exported names cuda.h maps these functions to (stable ABI).
        auto resolve = [&](const char* symbol, auto** fn) {
            *fn = lib.symbol<std::remove_pointer_t<decltype(fn)>>(symbol);
            ok = ok && *fn;
        };
        resolve("cuDeviceGetCount", &cuDeviceGetCount);
        resolve("cuDeviceGet", &cuDeviceGet);
        resolve("cuDeviceGetUuid_v2", &cuDeviceGetUuid);
        resolve("cuDevicePrimaryCtxRetain", &cuDevicePrimaryCtxRetain);
        resolve("cuDevicePrimaryCtxRelease_v2", &cuDevicePrimaryCtxRelease);
        resolve("cuCtxPushCurrent_v2", &cuCtxPushCurrent);
        resolve("cuCtxPopCurrent_v2", &cuCtxPopCurrent);
        resolve("cuStreamCreate", &cuStreamCreate);
        resolve("cuStreamDestroy_v2", &cuStreamDestroy);
        resolve("cuStreamSynchronize", &cuStreamSynchronize);
        resolve("cuStreamQuery", &cuStreamQuery);
        resolve("cuMemcpyAsync", &cuMemcpyAsync);
        resolve("cuMemcpyHtoDAsync_v2", &cuMemcpyHtoDAsync);
        resolve("cuMemAlloc_v2", &cuMemAlloc);
        resolve("cuMemAllocManaged", &cuMemAllocManaged);
        resolve("cuMemFree_v2", &cuMemFree);
        resolve("cuDeviceGetDefaultMemPool", &cuDeviceGetDefaultMemPool);
        resolve("cuMemAllocFromPoolAsync", &cuMemAllocFromPoolAsync);
        resolve("cuMemFreeAsync", &cuMemFreeAsync);
        resolve("cuModuleLoadData", &cuModuleLoadData);
        resolve("cuModuleUnload", &cuModuleUnload);
        resolve("cuModuleGetFunction", &cuModuleGetFunction);
        resolve("cuLaunchKernel", &cuLaunchKernel);
        resolve("cuCtxEnablePeerAccess", &cuCtxEnablePeerAccess);
        resolve("cuMemcpyPeerAsync", &cuMemcpyPeerAsync);
        return ok;
    }
};

// The device whose UUID is `uuid` (DeviceProperties::uuid); false when the driver has none.
inline bool find_cuda_device(const RawCuda& cu, const std::array<uint8_t, 16>& uuid, CUdevice* out) {
    int count = 0;
    if (cu.cuDeviceGetCount(&count) != kCudaSuccess) return false;
    for (int i = 0; i < count; ++i) {
        unsigned char id[16] = {};
        CUdevice dev = 0;
        if (cu.cuDeviceGet(&dev, i) != kCudaSuccess || cu.cuDeviceGetUuid(id, dev) != kCudaSuccess) continue;
        if (std::memcmp(id, uuid.data(), 16) != 0) continue;
        *out = dev;
        return true;
    }
    return false;
}

}  // namespace zehal::bench
