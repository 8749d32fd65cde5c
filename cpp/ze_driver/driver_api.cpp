// Initialization, the driver, its devices and contexts.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "chain.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "spec_ext.h"
#include "common/c_boundary.hpp"
#include "hal/types.hpp"

namespace zehal::ze_driver {
namespace {

// The extensions the driver implements, by their specification names.
struct Extension {
    std::string_view name;
    uint32_t version;
};
constexpr Extension kExtensions[] = {
    {ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZET_METRICS_TRACER_EXP_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZET_METRIC_EXPORT_MEMORY_EXP_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZET_CONCURRENT_METRIC_GROUPS_EXP_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZET_GLOBAL_METRICS_TIMESTAMPS_EXP_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZE_MEMORY_FREE_POLICIES_EXT_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZE_GLOBAL_OFFSET_EXP_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZE_KERNEL_MAX_GROUP_SIZE_PROPERTIES_EXT_NAME, ZE_MAKE_VERSION(1, 0)},
    {ZE_MODULE_PROGRAM_EXP_NAME, ZE_MAKE_VERSION(1, 0)},
};

// The extension functions zeDriverGetExtensionFunctionAddress hands out.
constexpr std::string_view kExtensionFunctions[] = {
    "zeEventQueryKernelTimestampsExt",
    "zetMetricTracerCreateExp",
    "zetMetricTracerDestroyExp",
    "zetMetricTracerEnableExp",
    "zetMetricTracerDisableExp",
    "zetMetricTracerReadDataExp",
    "zetMetricDecoderCreateExp",
    "zetMetricDecoderDestroyExp",
    "zetMetricDecoderGetDecodableMetricsExp",
    "zetMetricTracerDecodeExp",
    "zeCommandListImmediateAppendCommandListsExp",
    "zetDeviceGetConcurrentMetricGroupsExp",
    "zetMetricGroupGetGlobalTimestampsExp",
    "zeKernelSetGlobalOffsetExp",
};

constexpr uint32_t kInitFlagsGpuOnly = 1u << 0;
constexpr uint32_t kInitFlagsVpuOnly = 1u << 1;

// Flag bits no version of the specification defines are ignored, as by Intel's driver; only
// a request for VPUs alone finds no driver here (zehal's devices are GPUs).
ze_result_t zeInit_(ze_init_flags_t flags) {
    return ze_guarded([&] {
        if ((flags & kInitFlagsVpuOnly) && !(flags & kInitFlagsGpuOnly)) return ZE_RESULT_ERROR_UNINITIALIZED;
        return initialize();
    });
}

// zeInit and zeDriverGet in one call, for GPU drivers (zehal's devices are GPUs). Any flags
// with the GPU bit (UINT32_MAX, "every type", among them) find the driver; the descriptor's
// stype is not checked and its pNext names no structure the driver reads.
ze_result_t zeInitDrivers_(uint32_t* pCount, ze_driver_handle_t* phDrivers, ze_init_driver_type_desc_t* desc) {
    return ze_guarded([&] {
        if (!pCount || !desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const bool gpu = desc->flags & ZE_INIT_DRIVER_TYPE_FLAG_GPU;
        if (gpu) {
            if (ze_result_t r = initialize(); r != ZE_RESULT_SUCCESS) return r;
        }
        return hand_out(pCount, phDrivers != nullptr, gpu ? 1 : 0,
                        [&](uint32_t) { phDrivers[0] = reinterpret_cast<ze_driver_handle_t>(driver()); });
    });
}

ze_result_t zeDriverGet_(uint32_t* pCount, ze_driver_handle_t* phDrivers) {
    return ze_guarded([&] {
        DriverObject* d = driver();
        if (!d) return ZE_RESULT_ERROR_UNINITIALIZED;
        return hand_out(pCount, phDrivers != nullptr, 1,
                        [&](uint32_t) { phDrivers[0] = reinterpret_cast<ze_driver_handle_t>(d); });
    });
}

ze_result_t zeDriverGetApiVersion_(ze_driver_handle_t hDriver, ze_api_version_t* version) {
    return ze_guarded([&] {
        DriverObject* d = nullptr;
        if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!version) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *version = kApiVersion;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDriverGetProperties_(ze_driver_handle_t hDriver, ze_driver_properties_t* props) {
    return ze_guarded([&] {
        DriverObject* d = nullptr;
        if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!props) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::memset(props->uuid.id, 0, sizeof props->uuid.id);
        std::memcpy(props->uuid.id, "zehal-ze-driver", 15);
        props->driverVersion = ZEHAL_DRIVER_VERSION;
        // zeMemFreeExt: a blocking free waits for the commands using the memory (every
        // backend's free does); a deferred one returns at once and the driver frees later.
        if (auto* free = find_in_chain<ze_driver_memory_free_ext_properties_t>(
                props, {ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES}, ZE_STRUCTURE_TYPE_DRIVER_MEMORY_FREE_EXT_PROPERTIES))
            free->freePolicies = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE |
                                 ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDriverGetIpcProperties_(ze_driver_handle_t hDriver, ze_driver_ipc_properties_t* props) {
    return ze_guarded([&] {
        DriverObject* d = nullptr;
        if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!props) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // Memory handles where some device both exports its allocations and maps another
        // process's, event pool handles where some device shares its IPC pools (the sim device).
        props->flags = 0;
        for (const auto& device : d->devices) {
            if (device->device->exportable_kinds() != 0 && device->device->imports_any_dma_buf())
                props->flags |= ZE_IPC_PROPERTY_FLAG_MEMORY;
            if (device->device->properties().ipc_event_pools) props->flags |= ZE_IPC_PROPERTY_FLAG_EVENT_POOL;
        }
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDriverGetExtensionProperties_(ze_driver_handle_t hDriver, uint32_t* pCount,
                                            ze_driver_extension_properties_t* props) {
    return ze_guarded([&] {
        DriverObject* d = nullptr;
        if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
        return hand_out(pCount, props != nullptr, std::size(kExtensions), [&](uint32_t i) {
            copy_name(props[i].name, kExtensions[i].name);
            props[i].version = kExtensions[i].version;
        });
    });
}

ze_result_t zeDriverGetExtensionFunctionAddress_(ze_driver_handle_t hDriver, const char* name,
                                                 void** ppFunctionAddress) {
    return ze_guarded([&] {
        DriverObject* d = nullptr;
        if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!name || !ppFunctionAddress) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        for (std::string_view f : kExtensionFunctions) {
            if (f != name) continue;
            *ppFunctionAddress = reinterpret_cast<void*>(find_entry(f));
            return ZE_RESULT_SUCCESS;
        }
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    });
}

ze_result_t zeDeviceGet_(ze_driver_handle_t hDriver, uint32_t* pCount, ze_device_handle_t* phDevices) {
    return ze_guarded([&] {
        DriverObject* d = nullptr;
        if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
        return hand_out(pCount, phDevices != nullptr, static_cast<uint32_t>(d->devices.size()),
                        [&](uint32_t i) { phDevices[i] = handle_of(d->devices[i].get()); });
    });
}

ze_result_t zeDeviceGetSubDevices_(ze_device_handle_t hDevice, uint32_t* pCount, ze_device_handle_t* phSubdevices) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        return hand_out(pCount, phSubdevices != nullptr, 0, [](uint32_t) {});
    });
}

// Every device is a root device: its root is null (the specification's answer for a root).
ze_result_t zeDeviceGetRootDevice_(ze_device_handle_t hDevice, ze_device_handle_t* phRootDevice) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!phRootDevice) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *phRootDevice = nullptr;
        return ZE_RESULT_SUCCESS;
    });
}

// Device properties from the HAL's: timerResolution in Hz for the 1.2 structure, else the
// clock period in ns; the kernel timestamp capabilities in the extension's structure.
ze_result_t zeDeviceGetProperties_(ze_device_handle_t hDevice, ze_device_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const hal::DeviceProperties& hp = d->device->properties();
        p->type = ZE_DEVICE_TYPE_GPU;
        p->vendorId = 0;
        p->deviceId = d->index;
        p->flags = 0;
        p->subdeviceId = 0;
        p->coreClockRate = static_cast<uint32_t>(hp.timer_hz / 1'000'000);
        p->maxMemAllocSize = hp.max_allocation_bytes;
        p->maxHardwareContexts = 1;
        p->maxCommandQueuePriority = 0;
        p->numThreadsPerEU = 1;
        p->physicalEUSimdWidth = 1;
        p->numEUsPerSubslice = 1;
        p->numSubslicesPerSlice = 1;
        p->numSlices = 1;
        if (stype_of(p) == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2)
            p->timerResolution = hp.timer_hz;
        else
            p->timerResolution = hp.timer_hz ? 1'000'000'000ull / hp.timer_hz : 0;
        p->timestampValidBits = hp.timestamp_valid_bits;
        p->kernelTimestampValidBits = hp.kernel_timestamp_valid_bits;
        std::memcpy(p->uuid.id, hp.uuid.data(), std::min(sizeof p->uuid.id, hp.uuid.size()));
        copy_name(p->name, hp.name);
        if (auto* ts = find_in_chain<ze_event_query_kernel_timestamps_ext_properties_t>(
                p, {ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2},
                ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_PROPERTIES))
            ts->flags = hp.timestamp_flags;
        // Writes to read-only virtual memory are refused at append (hal/virtual_memory.hpp).
        if (auto* ro = find_in_chain<ze_device_readonly_memory_ext_properties_t>(
                p, {ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES, ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2},
                ZEHAL_STYPE_DEVICE_READONLY_MEMORY_EXT_PROPERTIES))
            ro->readonlyCapability = d->device->virtual_memory() ? ZE_DEVICE_READONLY_MEMORY_CAPABILITY_ENFORCED
                                                                 : ZE_DEVICE_READONLY_MEMORY_CAPABILITY_NONE;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDeviceGetComputeProperties_(ze_device_handle_t hDevice, ze_device_compute_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // The HAL's limits; a device without kernels reports the smallest a compute device
        // can. Subgroups are of one work-item (no subgroup operations are offered).
        const hal::DeviceProperties& hp = d->device->properties();
        p->maxTotalGroupSize = std::max(hp.max_group_size, 1u);
        p->maxGroupSizeX = std::max(hp.max_group_dims[0], 1u);
        p->maxGroupSizeY = std::max(hp.max_group_dims[1], 1u);
        p->maxGroupSizeZ = std::max(hp.max_group_dims[2], 1u);
        p->maxGroupCountX = std::max(hp.max_group_count[0], 1u);
        p->maxGroupCountY = std::max(hp.max_group_count[1], 1u);
        p->maxGroupCountZ = std::max(hp.max_group_count[2], 1u);
        p->maxSharedLocalMemory = hp.max_local_bytes;
        p->numSubGroupSizes = hp.module_formats ? 1 : 0;
        p->subGroupSizes[0] = 1;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDeviceGetCommandQueueGroupProperties_(ze_device_handle_t hDevice, uint32_t* pCount,
                                                    ze_command_queue_group_properties_t* props) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        const hal::DeviceProperties& hp = d->device->properties();
        const uint32_t groups = hp.copy_engines > 0 ? 2 : 1;
        return hand_out(pCount, props != nullptr, groups, [&](uint32_t i) {
            const bool compute = i == hal::kComputeOrdinal;
            // The compute group is marked as Level Zero compute groups are (compute, cooperative
            // kernels, copy) so programs that pick it by those flags find it; it runs copies,
            // fills and barriers, and no kernel (modules are unsupported).
            props[i].flags = compute ? ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                                           ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS |
                                           ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY
                                     : ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
            props[i].maxMemoryFillPatternSize = 128;
            props[i].numQueues = compute ? hp.compute_engines : hp.copy_engines;
        });
    });
}

ze_result_t zeDeviceGetMemoryProperties_(ze_device_handle_t hDevice, uint32_t* pCount,
                                         ze_device_memory_properties_t* props) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        const hal::DeviceProperties& hp = d->device->properties();
        return hand_out(pCount, props != nullptr, hp.memory_ordinals, [&](uint32_t i) {
            props[i].flags = 0;
            props[i].maxClockRate = hp.memory_clock_mhz;
            props[i].maxBusWidth = hp.memory_bus_width_bits;
            props[i].totalSize = hp.memory_bytes;
            copy_name(props[i].name, i == 0 ? "device" : "device " + std::to_string(i));
        });
    });
}

ze_result_t zeDeviceGetMemoryAccessProperties_(ze_device_handle_t hDevice, ze_device_memory_access_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        p->hostAllocCapabilities = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
        p->deviceAllocCapabilities = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
        p->sharedSingleDeviceAllocCapabilities = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
        p->sharedCrossDeviceAllocCapabilities = 0;
        // System memory (malloc, the stack) in kernels where the device reads and writes it in
        // place; copies and fills take it on every device.
        p->sharedSystemAllocCapabilities = d->device->properties().kernels_use_system_memory
                                               ? ZE_MEMORY_ACCESS_CAP_FLAG_RW
                                               : 0;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDeviceGetCacheProperties_(ze_device_handle_t hDevice, uint32_t* pCount,
                                        ze_device_cache_properties_t* props) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        return hand_out(pCount, props != nullptr, 0, [](uint32_t) {});  // no caches to describe
    });
}

ze_result_t zeDeviceGetExternalMemoryProperties_(ze_device_handle_t hDevice,
                                                 ze_device_external_memory_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // Imports of dma-bufs from anywhere: a device that maps only its own metric export
        // memory (CUDA) reports none, so that programs do not hand it others' dma-bufs.
        p->memoryAllocationImportTypes = d->device->imports_any_dma_buf() ? ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF : 0;
        // Device allocations exported as dma-bufs where the device's backend makes them.
        constexpr uint32_t kDeviceKind = 1u << static_cast<uint32_t>(hal::MemoryKind::device);
        p->memoryAllocationExportTypes = (d->device->exportable_kinds() & kDeviceKind)
                                             ? ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF
                                             : 0;
        p->imageImportTypes = 0;
        p->imageExportTypes = 0;
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDeviceCanAccessPeer_(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice, ze_bool_t* value) {
    return ze_guarded([&] {
        DeviceObject *d = nullptr, *peer = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = device_of(hPeerDevice, &peer); r != ZE_RESULT_SUCCESS) return r;
        if (!value) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *value = d->device->can_access_peer(*peer->device);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDeviceGetP2PProperties_(ze_device_handle_t hDevice, ze_device_handle_t hPeerDevice,
                                      ze_device_p2p_properties_t* p) {
    return ze_guarded([&] {
        DeviceObject *d = nullptr, *peer = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = device_of(hPeerDevice, &peer); r != ZE_RESULT_SUCCESS) return r;
        if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::PeerProperties peer_props;
        if (ze_result_t r = d->device->peer_properties(*peer->device, &peer_props); r != ZE_RESULT_SUCCESS) return r;
        auto* bandwidth = find_in_chain<ze_device_p2p_bandwidth_exp_properties_t>(
            p, {ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES}, ZE_STRUCTURE_TYPE_DEVICE_P2P_BANDWIDTH_EXP_PROPERTIES);
        p->flags = (peer_props.access ? ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS : 0) |
                   (peer_props.atomics ? ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS : 0);
        if (bandwidth) {
            // Bytes per ns (GB/s), the link's where the backend knows it; latency unknown.
            const uint64_t per_ns = peer_props.bandwidth_bytes_per_s / 1'000'000'000u;
            bandwidth->logicalBandwidth = bandwidth->physicalBandwidth = static_cast<uint32_t>(
                std::min<uint64_t>(per_ns, UINT32_MAX));
            bandwidth->bandwidthUnit = per_ns ? ZE_BANDWIDTH_UNIT_BYTES_PER_NANOSEC : ZE_BANDWIDTH_UNIT_UNKNOWN;
            bandwidth->logicalLatency = bandwidth->physicalLatency = 0;
            bandwidth->latencyUnit = ZE_LATENCY_UNIT_UNKNOWN;
        }
        return ZE_RESULT_SUCCESS;
    });
}

// The device's PCI address; its link speed is not known to zehal (-1, as the
// specification writes unknown values). A device not on PCI (sim) is UNSUPPORTED_FEATURE.
ze_result_t zeDevicePciGetPropertiesExt_(ze_device_handle_t hDevice, ze_pci_ext_properties_t* props) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!props) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const hal::DeviceProperties& hp = d->device->properties();
        if (!hp.on_pci) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        props->address = {hp.pci_address.domain, hp.pci_address.bus, hp.pci_address.device, hp.pci_address.function};
        props->maxSpeed = {-1, -1, -1};
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeDeviceGetStatus_(ze_device_handle_t hDevice) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        uint64_t host_ns = 0, ticks = 0;
        return d->device->global_timestamps(&host_ns, &ticks);
    });
}

ze_result_t zeDeviceGetGlobalTimestamps_(ze_device_handle_t hDevice, uint64_t* hostTimestamp,
                                         uint64_t* deviceTimestamp) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!hostTimestamp || !deviceTimestamp) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return d->device->global_timestamps(hostTimestamp, deviceTimestamp);
    });
}

ze_result_t create_context(ze_driver_handle_t hDriver, const ze_context_desc_t* desc, uint32_t numDevices,
                           ze_device_handle_t* phDevices, ze_context_handle_t* phContext) {
    DriverObject* d = nullptr;
    if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
    if (!desc || !phContext) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;  // flags: reserved, ignored
    if (numDevices > 0 && !phDevices) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < numDevices; ++i) {
        DeviceObject* device = nullptr;
        if (ze_result_t r = device_of(phDevices[i], &device); r != ZE_RESULT_SUCCESS) return r;
    }
    *phContext = to_handle<ze_context_handle_t>(contexts().add(std::make_shared<ContextObject>()));
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeContextCreate_(ze_driver_handle_t hDriver, const ze_context_desc_t* desc,
                             ze_context_handle_t* phContext) {
    return ze_guarded([&] { return create_context(hDriver, desc, 0, nullptr, phContext); });
}

ze_result_t zeContextCreateEx_(ze_driver_handle_t hDriver, const ze_context_desc_t* desc, uint32_t numDevices,
                               ze_device_handle_t* phDevices, ze_context_handle_t* phContext) {
    return ze_guarded([&] { return create_context(hDriver, desc, numDevices, phDevices, phContext); });
}

ze_result_t zeContextDestroy_(ze_context_handle_t hContext) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        contexts().remove(hContext);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeContextGetStatus_(ze_context_handle_t hContext) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        return contexts().get(hContext, &c);
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeInit, zeInit_),
    ZEHAL_ENTRY(zeInitDrivers, zeInitDrivers_),
    ZEHAL_ENTRY(zeDriverGet, zeDriverGet_),
    ZEHAL_ENTRY(zeDriverGetApiVersion, zeDriverGetApiVersion_),
    ZEHAL_ENTRY(zeDriverGetProperties, zeDriverGetProperties_),
    ZEHAL_ENTRY(zeDriverGetIpcProperties, zeDriverGetIpcProperties_),
    ZEHAL_ENTRY(zeDriverGetExtensionProperties, zeDriverGetExtensionProperties_),
    ZEHAL_ENTRY(zeDriverGetExtensionFunctionAddress, zeDriverGetExtensionFunctionAddress_),
    ZEHAL_ENTRY(zeDeviceGet, zeDeviceGet_),
    ZEHAL_ENTRY(zeDeviceGetSubDevices, zeDeviceGetSubDevices_),
    ZEHAL_ENTRY(zeDeviceGetRootDevice, zeDeviceGetRootDevice_),
    ZEHAL_ENTRY(zeDeviceGetProperties, zeDeviceGetProperties_),
    ZEHAL_ENTRY(zeDeviceGetComputeProperties, zeDeviceGetComputeProperties_),
    ZEHAL_ENTRY(zeDeviceGetCommandQueueGroupProperties, zeDeviceGetCommandQueueGroupProperties_),
    ZEHAL_ENTRY(zeDeviceGetMemoryProperties, zeDeviceGetMemoryProperties_),
    ZEHAL_ENTRY(zeDeviceGetMemoryAccessProperties, zeDeviceGetMemoryAccessProperties_),
    ZEHAL_ENTRY(zeDeviceGetCacheProperties, zeDeviceGetCacheProperties_),
    ZEHAL_ENTRY(zeDeviceGetExternalMemoryProperties, zeDeviceGetExternalMemoryProperties_),
    ZEHAL_ENTRY(zeDeviceCanAccessPeer, zeDeviceCanAccessPeer_),
    ZEHAL_ENTRY(zeDeviceGetP2PProperties, zeDeviceGetP2PProperties_),
    ZEHAL_ENTRY(zeDeviceGetStatus, zeDeviceGetStatus_),
    ZEHAL_ENTRY(zeDevicePciGetPropertiesExt, zeDevicePciGetPropertiesExt_),
    ZEHAL_ENTRY(zeDeviceGetGlobalTimestamps, zeDeviceGetGlobalTimestamps_),
    ZEHAL_ENTRY(zeContextCreate, zeContextCreate_),
    ZEHAL_ENTRY(zeContextCreateEx, zeContextCreateEx_),
    ZEHAL_ENTRY(zeContextDestroy, zeContextDestroy_),
    ZEHAL_ENTRY(zeContextGetStatus, zeContextGetStatus_),
};

}  // namespace

std::span<const Entry> driver_entries() { return kEntries; }

}  // namespace zehal::ze_driver
