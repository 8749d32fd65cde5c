// Structures of Level Zero extensions newer than the API 1.4 headers, declared here from
// the specification with zehal's own names (same layout), and their structure type values.
#pragma once

#include <level_zero/ze_api.h>

#include <cstddef>
#include <cstdint>

#include "hal/types.hpp"

namespace zehal::level_zero {

// Event query kernel timestamps extension (API 1.6).
inline constexpr uint32_t kStypeKernelTimestampsExtProperties = 0x00010011;  // device properties pNext
inline constexpr uint32_t kStypeKernelTimestampsExtResults = 0x00010012;     // query results
inline constexpr uint32_t kKernelTimestampsExtFlagKernel = 1u << 0;
inline constexpr uint32_t kKernelTimestampsExtFlagSynchronized = 1u << 1;

// In ze_device_properties_t's pNext chain: which timestamps the device gives.
struct KernelTimestampsExtProperties {
    uint32_t stype = kStypeKernelTimestampsExtProperties;
    void* next = nullptr;
    uint32_t flags = 0;  // kKernelTimestampsExtFlag* bits
};

// Where zeEventQueryKernelTimestampsExt writes: packets in ticks, in host ns, or both.
// Both buffers hold packets of four uint64 (global start, end; context start, end).
struct KernelTimestampsExtResults {
    uint32_t stype = kStypeKernelTimestampsExtResults;
    void* next = nullptr;
    ze_kernel_timestamp_result_t* ticks = nullptr;
    hal::KernelTimestampResult* synchronized = nullptr;
};

// Metric export memory extension (API 1.10), in zet_metric_group_properties_t's pNext chain.
inline constexpr uint32_t kStypeMetricGroupTypeExp = 0x00010006;
inline constexpr uint32_t kStypeExportDmaBufExpProperties = 0x00010007;

// The group's type flags (hal::GroupType values).
struct MetricGroupTypeExp {
    uint32_t stype = kStypeMetricGroupTypeExp;
    void* next = nullptr;
    uint32_t type = 0;
};

// The group's exported memory: a dma-buf fd the group owns, and its size.
struct ExportDmaBufExpProperties {
    uint32_t stype = kStypeExportDmaBufExpProperties;
    void* next = nullptr;
    int fd = -1;
    size_t size = 0;
};

// Pool flags newer than API 1.4.
inline constexpr uint32_t kEventPoolFlagKernelMappedTimestamp = 1u << 3;

static_assert(sizeof(ze_kernel_timestamp_result_t) == sizeof(hal::KernelTimestampResult),
              "a kernel timestamp packet is four uint64");

}  // namespace zehal::level_zero
