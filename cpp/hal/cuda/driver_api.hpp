// The CUDA driver API, resolved at run time from libcuda.so.1 (nothing is linked).
#pragma once

#include <cuda.h>

#include <string>

#include "zehal/ze_result.h"

namespace zehal::cuda {

// The driver entry points zehal uses. cuda.h maps plain names to the versioned symbols it
// declares (cuMemAlloc → cuMemAlloc_v2), so each member is declared with `decltype` of the
// plain name and resolved by that symbol's exported name: exactly the function a program
// linked against these headers would call. (cuGetProcAddress is not used: at CUDA_VERSION
// it can hand back a newer version whose signature differs from the one cuda.h declares
// under the plain name, as cuCtxSynchronize's does in CUDA 13.)
// (An X-macro list, laid out by hand.)
// clang-format off
#define ZEHAL_CUDA_DRIVER_FUNCTIONS(X)                                                               \
    X(cuInit) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet)            \
    X(cuDeviceGetName) X(cuDeviceGetUuid) X(cuDeviceTotalMem) X(cuDeviceGetAttribute)                \
    X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent) X(cuCtxSetCurrent)   \
    X(cuMemAlloc) X(cuMemFree) X(cuMemHostAlloc) X(cuMemFreeHost)               \
    X(cuMemAllocManaged) X(cuMemGetInfo) X(cuMemHostGetDevicePointer) X(cuStreamCreate)              \
    X(cuStreamDestroy) X(cuStreamQuery) X(cuStreamSynchronize) X(cuStreamWriteValue32)              \
    X(cuStreamWaitValue32) X(cuMemcpyAsync) X(cuMemsetD8Async) X(cuMemsetD16Async)     \
    X(cuMemsetD32Async) X(cuMemsetD2D8Async) X(cuMemsetD2D32Async) X(cuModuleLoadData)             \
    X(cuModuleUnload) X(cuModuleGetFunction) X(cuLaunchKernel) X(cuMemGetHandleForAddressRange)    \
    X(cuMemCreate) X(cuMemRelease) X(cuMemAddressReserve) X(cuMemAddressFree) X(cuMemMap)          \
    X(cuMemUnmap) X(cuMemSetAccess) X(cuMemGetAllocationGranularity) X(cuLaunchHostFunc)          \
    X(cuPointerGetAttributes) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)                    \
    X(cuEventSynchronize) X(cuEventQuery) X(cuStreamWaitEvent) X(cuModuleLoadDataEx) X(cuFuncGetAttribute)         \
    X(cuFuncSetAttribute) X(cuCtxSynchronize) X(cuDeviceCanAccessPeer)         \
    X(cuDeviceGetP2PAttribute) X(cuCtxEnablePeerAccess) X(cuMemcpyPeerAsync) X(cuModuleGetGlobal)
// Entry points of newer drivers zehal uses when they are there: the kernels and parameters
// of a cubin (CUDA 12.4), the flush of GPUDirect RDMA writes (CUDA 11.3). Null in the table
// when the driver lacks them.
#define ZEHAL_CUDA_OPTIONAL_FUNCTIONS(X) \
    X(cuModuleGetFunctionCount) X(cuModuleEnumerateFunctions) X(cuFuncGetName) X(cuFuncGetParamInfo) \
    X(cuFlushGPUDirectRDMAWrites)
// clang-format on

// The table; load once with driver_api().
struct DriverApi {
#define ZEHAL_CUDA_DECLARE(name) decltype(&::name) name = nullptr;
    ZEHAL_CUDA_DRIVER_FUNCTIONS(ZEHAL_CUDA_DECLARE)
    ZEHAL_CUDA_OPTIONAL_FUNCTIONS(ZEHAL_CUDA_DECLARE)
#undef ZEHAL_CUDA_DECLARE
};

// The driver table, loaded (and cuInit called) on first use, thread-safely; null when
// libcuda.so.1 is missing, lacks an entry point, or cuInit fails; *why then says which.
const DriverApi* driver_api(std::string* why);

// The ze_result_t that names a CUresult (out of memory, invalid value, lost device, …).
ze_result_t to_ze_result(CUresult r) noexcept;
// True for CUresults after which the context is unusable (sticky errors): the device is lost.
bool is_device_lost(CUresult r) noexcept;
// "CUDA_ERROR_OUT_OF_MEMORY" for messages.
std::string error_name(const DriverApi& api, CUresult r);

// Makes `ctx` the calling thread's current context for the scope and restores the previous
// one after it, so that zehal never changes the context a CUDA runtime user relies on.
// Costs one cuCtxGetCurrent when `ctx` already is current.
class ContextScope {
public:
    ContextScope(const DriverApi& api, CUcontext ctx) noexcept : api_(api) {
        if (api_.cuCtxGetCurrent(&previous_) != CUDA_SUCCESS) previous_ = nullptr;
        if (previous_ != ctx) {
            switched_ = api_.cuCtxSetCurrent(ctx) == CUDA_SUCCESS;
        }
    }
    ~ContextScope() {
        if (switched_) api_.cuCtxSetCurrent(previous_);
    }
    ContextScope(const ContextScope&) = delete;
    ContextScope& operator=(const ContextScope&) = delete;

private:
    const DriverApi& api_;
    CUcontext previous_ = nullptr;
    bool switched_ = false;
};

}  // namespace zehal::cuda
