// Structures of Level Zero extensions newer than the API 1.4 headers, declared here from
// the specification with zehal's own names (same layout), and their structure type values.
#pragma once

#include <level_zero/ze_api.h>

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

// Immediate command list flags and pool flags newer than API 1.4.
inline constexpr uint32_t kEventPoolFlagKernelMappedTimestamp = 1u << 3;

static_assert(sizeof(ze_kernel_timestamp_result_t) == sizeof(hal::KernelTimestampResult),
              "a kernel timestamp packet is four uint64");

}  // namespace zehal::level_zero
