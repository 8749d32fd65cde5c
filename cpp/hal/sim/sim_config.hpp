// Settings of a software device, from code or ZEHAL_SIM_* environment variables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "zehal/ze_result.h"
#include "common/clock_skew.hpp"

namespace zehal::sim {

struct SimConfig {
    uint32_t compute_engines = 1;        // engines of ordinal 0 (>= 1)
    uint32_t copy_engines = 2;           // engines of ordinal 1
    uint64_t memory_bytes = 1ull << 30;  // device memory capacity
    uint64_t timer_hz = 19'200'000;      // device clock frequency
    uint32_t kernel_timestamp_valid_bits = 32;
    uint32_t timestamp_valid_bits = 64;
    uint64_t start_ticks = 0;                       // device clock at creation (to force wraps)
    uint32_t subdevices = 0;                        // root-device commands split across these
    size_t trace_buffer_bytes = 1u << 20;           // hardware trace buffer
    uint64_t bandwidth_bytes_per_s = 0;             // copy throttle per engine; 0 = unthrottled
    uint64_t link_bandwidth_bytes_per_s = 0;        // throttle of copies touching a peer's memory; 0 = none
    uint32_t devices = 1;                           // devices the sim backend offers (the registry's)
    std::optional<uint64_t> fail_allocation_after;  // allocations after the first N fail
    uint64_t async_records_per_s = 100'000;         // rate of the asynchronous trace source
    uint64_t async_burst_records = 0;               // records it emits at once when started
    // Test-only: the host clock of the device's synchronized timestamps (global_timestamps,
    // and so the tracer's clock-sync records) reads as skewed by ZEHAL_TEST_CLOCK_SKEW, as
    // a node whose clock is off would read it; the ticks run on the unskewed clock.
    ClockSkew host_skew = test_clock_skew();
    // Set by from_env for the first variable whose text is not a value of its field, as
    // "<field> = \"<text>\" (<what is allowed>)"; empty otherwise.
    std::string malformed;

    // Defaults overridden by ZEHAL_SIM_COPY_ENGINES, _COMPUTE_ENGINES, _MEMORY_BYTES,
    // _TIMER_HZ, _KERNEL_TIMESTAMP_VALID_BITS, _TIMESTAMP_VALID_BITS, _START_TICKS,
    // _SUBDEVICES, _TRACE_BUFFER_BYTES, _BANDWIDTH_BYTES_PER_S, _LINK_BANDWIDTH_BYTES_PER_S,
    // _DEVICES, _FAIL_ALLOCATION_AFTER, _ASYNC_RECORDS_PER_S, _ASYNC_BURST_RECORDS. An empty variable counts as unset; any
    // other text that is not an unsigned integer of the field's type sets `malformed`.
    static SimConfig from_env();
    // INVALID_ARGUMENT when a variable was malformed or a field is out of range (no engine,
    // zero memory or clock, valid bits outside 1..64, trace buffer under one record), or
    // above the limits below.
    ze_result_t validate() const;
    // `malformed`, else the first field out of range, as "<field> = <value> (<what is
    // allowed>)"; empty when validate() succeeds. Field names are the Python and
    // ZEHAL_SIM_* ones, in lower case.
    std::string problem() const;

    static constexpr uint32_t kMaxEngines = 64;  // per engine group
    static constexpr uint32_t kMaxSubdevices = 64;
    static constexpr uint32_t kMaxDevices = 64;
    static constexpr uint64_t kMaxTimerHz = 10'000'000'000;  // 10 GHz
    static constexpr size_t kMaxTraceBufferBytes = 1ull << 30;
    static constexpr uint64_t kMaxAsyncBurstRecords = 1ull << 25;  // a full buffer of the largest size
};

}  // namespace zehal::sim
