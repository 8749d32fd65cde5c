// The Level Zero loader's API, resolved at run time from libze_loader.so.1 (nothing is linked).
#pragma once

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#include <cstdint>
#include <string>

#include "zehal/ze_result.h"

namespace zehal::level_zero {

// The core entry points zehal uses, each declared with `decltype` of the headers'
// declaration and resolved by its exported name in the loader.
// (An X-macro list, laid out by hand.)
// clang-format off
#define ZEHAL_ZE_CORE_FUNCTIONS(X)                                                                   \
    X(zeInit) X(zeDriverGet) X(zeDriverGetExtensionFunctionAddress) X(zeDeviceGet)                   \
    X(zeDeviceGetProperties) X(zeDeviceGetCommandQueueGroupProperties)                               \
    X(zeDeviceGetMemoryProperties) X(zeDeviceGetExternalMemoryProperties)                            \
    X(zeDeviceGetMemoryAccessProperties)                                                             \
    X(zeDeviceGetGlobalTimestamps) X(zeContextCreate) X(zeMemAllocHost) X(zeMemAllocDevice)          \
    X(zeMemAllocShared) X(zeMemFree) X(zeCommandListCreateImmediate) X(zeCommandListDestroy)         \
    X(zeCommandListAppendMemoryCopy) X(zeCommandListAppendMemoryFill) X(zeCommandListAppendBarrier)  \
    X(zeCommandListAppendEventReset) X(zeCommandListAppendWriteGlobalTimestamp)                      \
    X(zeCommandListAppendQueryKernelTimestamps)                                                      \
    X(zeEventPoolCreate) X(zeEventPoolDestroy) X(zeEventCreate) X(zeEventDestroy)                    \
    X(zeEventHostSignal) X(zeEventHostReset) X(zeEventHostSynchronize) X(zeEventQueryStatus)         \
    X(zeEventQueryKernelTimestamp) X(zetMetricGroupGet) X(zetMetricGroupGetProperties)               \
    X(zetMetricGet) X(zetMetricGetProperties)                                                       \
    X(zeDeviceGetComputeProperties) X(zeDeviceGetModuleProperties) X(zeModuleCreate)                  \
    X(zeModuleDestroy) X(zeModuleGetKernelNames) X(zeModuleGetNativeBinary)                           \
    X(zeModuleBuildLogGetString) X(zeModuleBuildLogDestroy) X(zeModuleGetProperties)                  \
    X(zeModuleGetGlobalPointer) X(zeModuleGetFunctionPointer) X(zeModuleDynamicLink)                  \
    X(zeKernelCreate) X(zeKernelDestroy) X(zeKernelSetArgumentValue) X(zeKernelSetGroupSize)         \
    X(zeKernelSuggestGroupSize) X(zeKernelGetProperties) X(zeKernelGetSourceAttributes)              \
    X(zeCommandListAppendLaunchKernel)                                                              \
    X(zeCommandListAppendLaunchKernelIndirect) X(zeCommandListAppendLaunchMultipleKernelsIndirect)    \
    X(zeDeviceCanAccessPeer) X(zeDeviceGetP2PProperties)
// clang-format on

// Extension functions beyond the API 1.4 headers, declared from the specification: the
// event query kernel timestamps extension (API 1.6) and immediate command list
// synchronization (API 1.6). Their structures are in ext_types.hpp.
struct KernelTimestampsExtResults;
using ZeEventQueryKernelTimestampsExtFn = ze_result_t(ZE_APICALL*)(ze_event_handle_t event, ze_device_handle_t device,
                                                                   uint32_t* count,
                                                                   KernelTimestampsExtResults* results);
using ZeCommandListHostSynchronizeFn = ze_result_t(ZE_APICALL*)(ze_command_list_handle_t list, uint64_t timeout);

// The loader table; load once with ze_api().
struct ZeApi {
#define ZEHAL_ZE_DECLARE(name) decltype(&::name) name = nullptr;
    ZEHAL_ZE_CORE_FUNCTIONS(ZEHAL_ZE_DECLARE)
#undef ZEHAL_ZE_DECLARE
    // Exported by loaders of API 1.6 and later; else resolved per driver (DriverFunctions).
    ZeCommandListHostSynchronizeFn zeCommandListHostSynchronize = nullptr;
    // Exported by loaders of API 1.3 and later (memory free policies); null otherwise.
    decltype(&::zeMemFreeExt) zeMemFreeExt = nullptr;
    // The global offset extension (ZE_experimental_global_offset); null where the loader lacks it.
    decltype(&::zeKernelSetGlobalOffsetExp) zeKernelSetGlobalOffsetExp = nullptr;
};

// The table, loaded (and zeInit(GPU) called) on first use, thread-safely; null when
// libze_loader.so.1 is missing, lacks an entry point, or zeInit fails; *why then says which.
const ZeApi* ze_api(std::string* why);

// "ZE_RESULT_ERROR_DEVICE_LOST" for messages.
std::string result_text(ze_result_t r);

}  // namespace zehal::level_zero
