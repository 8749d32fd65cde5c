// What the driver needs of the Level Zero specification beyond the API 1.4 headers it is
// built with (Debian's libze-dev): the extensions it implements (kernel timestamps query,
// metric tracer, metric export memory) and zeInitDrivers, declared from the specification.
// Each block is skipped when the headers in use already declare it (newer headers define
// the extension's name macro). Structure type values are given as plain constants below, so
// they never clash with the headers' enumerations.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#ifdef __cplusplus
extern "C" {
#endif

// Event query kernel timestamps extension ("ZE_extension_event_query_kernel_timestamps",
// version 1.0, API 1.6): zeEventQueryKernelTimestampsExt and the device capability it
// reports in ze_device_properties_t's pNext chain.
#ifndef ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_NAME
#define ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_NAME "ZE_extension_event_query_kernel_timestamps"
typedef uint32_t ze_event_query_kernel_timestamps_ext_flags_t;
#define ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_FLAG_KERNEL (1u << 0)
#define ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_FLAG_SYNCHRONIZED (1u << 1)

typedef struct _ze_event_query_kernel_timestamps_ext_properties_t {
    ze_structure_type_t stype;  // 0x00010011
    void* pNext;
    ze_event_query_kernel_timestamps_ext_flags_t flags;  // [out]
} ze_event_query_kernel_timestamps_ext_properties_t;

typedef struct _ze_synchronized_timestamp_data_ext_t {
    uint64_t kernelStart;  // host ns
    uint64_t kernelEnd;
} ze_synchronized_timestamp_data_ext_t;

typedef struct _ze_synchronized_timestamp_result_ext_t {
    ze_synchronized_timestamp_data_ext_t global;
    ze_synchronized_timestamp_data_ext_t context;
} ze_synchronized_timestamp_result_ext_t;

typedef struct _ze_event_query_kernel_timestamps_results_ext_properties_t {
    ze_structure_type_t stype;  // 0x00010012
    void* pNext;
    ze_kernel_timestamp_result_t* pKernelTimestampsBuffer;                  // [optional]
    ze_synchronized_timestamp_result_ext_t* pSynchronizedTimestampsBuffer;  // [optional]
} ze_event_query_kernel_timestamps_results_ext_properties_t;

ze_result_t ZE_APICALL
zeEventQueryKernelTimestampsExt(ze_event_handle_t hEvent, ze_device_handle_t hDevice, uint32_t* pCount,
                                ze_event_query_kernel_timestamps_results_ext_properties_t* pResults);
#endif

// Driver initialization by type (API 1.10): what newer loaders call where zeInit was.
#ifndef ZE_INIT_DRIVER_TYPE_FLAG_GPU
typedef uint32_t ze_init_driver_type_flags_t;
#define ZE_INIT_DRIVER_TYPE_FLAG_GPU (1u << 0)
#define ZE_INIT_DRIVER_TYPE_FLAG_NPU (1u << 1)
typedef struct _ze_init_driver_type_desc_t {
    ze_structure_type_t stype;  // 0x00020021
    const void* pNext;
    ze_init_driver_type_flags_t flags;
} ze_init_driver_type_desc_t;
ze_result_t ZE_APICALL zeInitDrivers(uint32_t* pCount, ze_driver_handle_t* phDrivers, ze_init_driver_type_desc_t* desc);
#endif

// Immediate command list synchronization (API 1.6); redeclaring it where the headers
// already do is harmless.
ze_result_t ZE_APICALL zeCommandListHostSynchronize(ze_command_list_handle_t hCommandList, uint64_t timeout);

// Object queries (API 1.9) and the root device (API 1.7); redeclaring them where the headers
// already do is harmless.
ze_result_t ZE_APICALL zeDeviceGetRootDevice(ze_device_handle_t hDevice, ze_device_handle_t* phRootDevice);
ze_result_t ZE_APICALL zeCommandQueueGetOrdinal(ze_command_queue_handle_t hCommandQueue, uint32_t* pOrdinal);
ze_result_t ZE_APICALL zeCommandQueueGetIndex(ze_command_queue_handle_t hCommandQueue, uint32_t* pIndex);
ze_result_t ZE_APICALL zeCommandListGetDeviceHandle(ze_command_list_handle_t hCommandList,
                                                    ze_device_handle_t* phDevice);
ze_result_t ZE_APICALL zeCommandListGetContextHandle(ze_command_list_handle_t hCommandList,
                                                     ze_context_handle_t* phContext);
ze_result_t ZE_APICALL zeCommandListGetOrdinal(ze_command_list_handle_t hCommandList, uint32_t* pOrdinal);
ze_result_t ZE_APICALL zeCommandListImmediateGetIndex(ze_command_list_handle_t hCommandListImmediate, uint32_t* pIndex);
ze_result_t ZE_APICALL zeCommandListIsImmediate(ze_command_list_handle_t hCommandList, ze_bool_t* pIsImmediate);
ze_result_t ZE_APICALL zeEventGetEventPool(ze_event_handle_t hEvent, ze_event_pool_handle_t* phEventPool);
ze_result_t ZE_APICALL zeEventGetSignalScope(ze_event_handle_t hEvent, ze_event_scope_flags_t* pSignalScope);
ze_result_t ZE_APICALL zeEventGetWaitScope(ze_event_handle_t hEvent, ze_event_scope_flags_t* pWaitScope);
ze_result_t ZE_APICALL zeEventPoolGetContextHandle(ze_event_pool_handle_t hEventPool, ze_context_handle_t* phContext);
ze_result_t ZE_APICALL zeEventPoolGetFlags(ze_event_pool_handle_t hEventPool, ze_event_pool_flags_t* pFlags);

// Metric tracer ("ZET_experimental_metric_tracer", version 1.0, API 1.10).
#ifndef ZET_METRICS_TRACER_EXP_NAME
#define ZET_METRICS_TRACER_EXP_NAME "ZET_experimental_metric_tracer"
typedef struct _zet_metric_tracer_exp_handle_t* zet_metric_tracer_exp_handle_t;
typedef struct _zet_metric_decoder_exp_handle_t* zet_metric_decoder_exp_handle_t;

typedef struct _zet_metric_tracer_exp_desc_t {
    zet_structure_type_t stype;  // 0x00010008
    const void* pNext;
    uint32_t notifyEveryNBytes;  // [in,out]
} zet_metric_tracer_exp_desc_t;

typedef struct _zet_metric_entry_exp_t {
    zet_value_t value;
    uint64_t timeStamp;
    uint32_t metricIndex;
    ze_bool_t onSubdevice;
    uint32_t subdeviceId;
} zet_metric_entry_exp_t;

ze_result_t ZE_APICALL zetMetricTracerCreateExp(zet_context_handle_t hContext, zet_device_handle_t hDevice,
                                                uint32_t metricGroupCount, zet_metric_group_handle_t* phMetricGroups,
                                                zet_metric_tracer_exp_desc_t* desc,
                                                ze_event_handle_t hNotificationEvent,
                                                zet_metric_tracer_exp_handle_t* phMetricTracer);
ze_result_t ZE_APICALL zetMetricTracerDestroyExp(zet_metric_tracer_exp_handle_t hMetricTracer);
ze_result_t ZE_APICALL zetMetricTracerEnableExp(zet_metric_tracer_exp_handle_t hMetricTracer, ze_bool_t synchronous);
ze_result_t ZE_APICALL zetMetricTracerDisableExp(zet_metric_tracer_exp_handle_t hMetricTracer, ze_bool_t synchronous);
ze_result_t ZE_APICALL zetMetricTracerReadDataExp(zet_metric_tracer_exp_handle_t hMetricTracer, size_t* pRawDataSize,
                                                  uint8_t* pRawData);
ze_result_t ZE_APICALL zetMetricDecoderCreateExp(zet_metric_tracer_exp_handle_t hMetricTracer,
                                                 zet_metric_decoder_exp_handle_t* phMetricDecoder);
ze_result_t ZE_APICALL zetMetricDecoderDestroyExp(zet_metric_decoder_exp_handle_t phMetricDecoder);
ze_result_t ZE_APICALL zetMetricDecoderGetDecodableMetricsExp(zet_metric_decoder_exp_handle_t hMetricDecoder,
                                                              uint32_t* pCount, zet_metric_handle_t* phMetrics);
ze_result_t ZE_APICALL zetMetricTracerDecodeExp(zet_metric_decoder_exp_handle_t phMetricDecoder, size_t* pRawDataSize,
                                                uint8_t* pRawData, uint32_t metricsCount,
                                                zet_metric_handle_t* phMetrics, uint32_t* pSetCount,
                                                uint32_t* pMetricEntriesCountPerSet, uint32_t* pMetricEntriesCount,
                                                zet_metric_entry_exp_t* pMetricEntries);
#endif

// Metric export memory ("ZET_experimental_metric_export_memory", version 1.0, API 1.10):
// group type and dma-buf properties in zet_metric_group_properties_t's pNext chain.
#ifndef ZET_METRIC_EXPORT_MEMORY_EXP_NAME
#define ZET_METRIC_EXPORT_MEMORY_EXP_NAME "ZET_experimental_metric_export_memory"
typedef uint32_t zet_metric_group_type_exp_flags_t;
#define ZET_METRIC_GROUP_TYPE_EXP_FLAG_EXPORT_DMA_BUF (1u << 0)
#define ZET_METRIC_GROUP_TYPE_EXP_FLAG_USER_CREATED (1u << 1)
#define ZET_METRIC_GROUP_TYPE_EXP_FLAG_OTHER (1u << 2)
#define ZET_METRIC_GROUP_TYPE_EXP_FLAG_MARKER (1u << 3)

typedef struct _zet_metric_group_type_exp_t {
    zet_structure_type_t stype;  // 0x00010006
    void* pNext;
    zet_metric_group_type_exp_flags_t type;  // [out]
} zet_metric_group_type_exp_t;

typedef struct _zet_export_dma_buf_exp_properties_t {
    zet_structure_type_t stype;  // 0x00010007
    void* pNext;
    int fd;       // [out] owned by the group
    size_t size;  // [out]
} zet_export_dma_buf_exp_properties_t;
#endif

// Metric source id (of "ZET_experimental_metric_group_marker", version 1.0, API 1.11): what
// produces a group's data, in zet_metric_group_properties_t's pNext chain. The driver fills it
// and does not offer the extension's markers (zetCommandListAppendMarkerExp).
#ifndef ZET_METRIC_GROUP_MARKER_EXP_NAME
typedef struct _zet_metric_source_id_exp_t {
    zet_structure_type_t stype;  // 0x00010009
    void* pNext;
    uint32_t sourceId;  // [out] one number per source of the device
} zet_metric_source_id_exp_t;
#endif

// Functions of later API versions the driver implements beyond the seeds'; redeclaring one
// where the headers already do is harmless. The last error's description (API 1.6).
ze_result_t ZE_APICALL zeDriverGetLastErrorDescription(ze_driver_handle_t hDriver, const char** ppString);
// Regular command lists executed through an immediate one ("ZE_experimental_immediate_command_list_append").
ze_result_t ZE_APICALL zeCommandListImmediateAppendCommandListsExp(
    ze_command_list_handle_t hCommandListImmediate, uint32_t numCommandLists, ze_command_list_handle_t* phCommandLists,
    ze_event_handle_t hSignalEvent, uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents);
// Metric groups that can be collected together ("ZET_experimental_concurrent_metric_groups").
ze_result_t ZE_APICALL zetDeviceGetConcurrentMetricGroupsExp(zet_device_handle_t hDevice, uint32_t metricGroupCount,
                                                             zet_metric_group_handle_t* phMetricGroups,
                                                             uint32_t* pMetricGroupsCountPerConcurrentGroup,
                                                             uint32_t* pConcurrentGroupCount);
// The device's global timestamp beside the metrics' ("ZET_experimental_global_metric_timestamps").
ze_result_t ZE_APICALL zetMetricGroupGetGlobalTimestampsExp(zet_metric_group_handle_t hMetricGroup,
                                                            ze_bool_t synchronizedWithHost, uint64_t* globalTimestamp,
                                                            uint64_t* metricTimestamp);
// IPC handles returned to the driver by their exporter, and an IPC memory handle made from,
// or read back as, the fd it carries (API 1.6).
ze_result_t ZE_APICALL zeMemPutIpcHandle(ze_context_handle_t hContext, ze_ipc_mem_handle_t handle);
ze_result_t ZE_APICALL zeEventPoolPutIpcHandle(ze_context_handle_t hContext, ze_ipc_event_pool_handle_t hIpc);
ze_result_t ZE_APICALL zeMemGetIpcHandleFromFileDescriptorExp(ze_context_handle_t hContext, uint64_t handle,
                                                              ze_ipc_mem_handle_t* pIpcHandle);
ze_result_t ZE_APICALL zeMemGetFileDescriptorFromIpcHandleExp(ze_context_handle_t hContext,
                                                              ze_ipc_mem_handle_t ipcHandle, uint64_t* pHandle);
#ifndef ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME
#define ZE_IMMEDIATE_COMMAND_LIST_APPEND_EXP_NAME "ZE_experimental_immediate_command_list_append"
#endif
#ifndef ZET_CONCURRENT_METRIC_GROUPS_EXP_NAME
#define ZET_CONCURRENT_METRIC_GROUPS_EXP_NAME "ZET_experimental_concurrent_metric_groups"
#endif
#ifndef ZET_GLOBAL_METRICS_TIMESTAMPS_EXP_NAME
#define ZET_GLOBAL_METRICS_TIMESTAMPS_EXP_NAME "ZET_experimental_global_metric_timestamps"
#endif
#ifndef ZE_VIRTUAL_MEM_READONLY_PROPERTIES_EXT_NAME
// Virtual memory read-only properties extension (API 1.15): what a device does with writes to
// pages mapped read-only.
#define ZE_VIRTUAL_MEM_READONLY_PROPERTIES_EXT_NAME "ZE_extension_virtual_mem_readonly_properties"
typedef enum _ze_device_readonly_memory_capability_t {
    ZE_DEVICE_READONLY_MEMORY_CAPABILITY_NONE = 0,
    ZE_DEVICE_READONLY_MEMORY_CAPABILITY_HINT = 1,
    ZE_DEVICE_READONLY_MEMORY_CAPABILITY_ENFORCED = 2,
    ZE_DEVICE_READONLY_MEMORY_CAPABILITY_FORCE_UINT32 = 0x7fffffff
} ze_device_readonly_memory_capability_t;
typedef struct _ze_device_readonly_memory_ext_properties_t {
    ze_structure_type_t stype;
    void* pNext;
    ze_device_readonly_memory_capability_t readonlyCapability;
} ze_device_readonly_memory_ext_properties_t;
#endif

// Kernel max group size properties extension ("ZE_extension_kernel_max_group_size_properties",
// version 1.0, API 1.11): the largest group a kernel runs with, in ze_kernel_properties_t's
// pNext chain.
#ifndef ZE_KERNEL_MAX_GROUP_SIZE_PROPERTIES_EXT_NAME
#define ZE_KERNEL_MAX_GROUP_SIZE_PROPERTIES_EXT_NAME "ZE_extension_kernel_max_group_size_properties"
typedef struct _ze_kernel_max_group_size_properties_ext_t {
    ze_structure_type_t stype;  // 0x00010013
    void* pNext;
    uint32_t maxGroupSize;
} ze_kernel_max_group_size_properties_ext_t;
#endif

#ifdef __cplusplus
}  // extern "C"
#endif

// Structure type values of the structures above (API 1.6, 1.10 and 1.11), and of the
// experimental metric sampling type flag that marks a tracer-based group (API 1.10).
#define ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_PROPERTIES 0x00010011u
#define ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_RESULTS_EXT_PROPERTIES 0x00010012u
#define ZEHAL_STYPE_METRIC_GROUP_TYPE_EXP 0x00010006u
#define ZEHAL_STYPE_EXPORT_DMA_BUF_EXP_PROPERTIES 0x00010007u
#define ZEHAL_STYPE_METRIC_TRACER_EXP_DESC 0x00010008u
#define ZEHAL_STYPE_METRIC_SOURCE_ID_EXP 0x00010009u
#define ZEHAL_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED (1u << 2)
// Structure type of ze_device_readonly_memory_ext_properties_t (API 1.15).
#define ZEHAL_STYPE_DEVICE_READONLY_MEMORY_EXT_PROPERTIES 0x00010015u
// Structure type of ze_kernel_max_group_size_properties_ext_t (API 1.11).
#define ZEHAL_STYPE_KERNEL_MAX_GROUP_SIZE_EXT_PROPERTIES 0x00010013u
