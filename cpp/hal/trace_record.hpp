// The canonical raw trace record, version 1 (contract §5.3): 32 little-endian bytes.
#pragma once

#include <cstdint>

namespace zehal::hal {

// Record kinds.
enum RecordKind : uint16_t {
    kRecordSample = 1,
    kRecordEnable = 2,
    kRecordDisable = 3,
    kRecordDropped = 4,      // value = records lost at this point
    kRecordClockSync = 5,    // value = host ns at `ticks`
    kRecordExportWrite = 6,  // value = first 32-bit word written into exported memory
};

// Sub-device id of a record made on the root device.
inline constexpr uint32_t kRootDevice = 0xFFFFFFFFu;

// One version-1 record. `metric` is a device-wide metric id inside a hardware buffer
// and the index in the tracer's decodable metrics once the tracer has passed it on.
struct TraceRecord {
    uint16_t kind;
    uint16_t size;  // sizeof(TraceRecord) for version 1
    uint32_t metric;
    uint64_t ticks;      // raw device ticks, wrapping at timestamp_valid_bits
    uint64_t value;      // typed by the metric's result type
    uint32_t subdevice;  // kRootDevice on the root device
    uint32_t sequence;   // per tracer, wraps
};
static_assert(sizeof(TraceRecord) == 32, "version-1 records are 32 bytes");

}  // namespace zehal::hal
