// Raw data of metric streamers and queries (counter reports) and its calculation into
// metric values (zetMetricGroupCalculateMetricValues).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zehal/ze_result.h"
#include "metrics/metric_group.hpp"

namespace zehal::metrics {

// A counter report, version 1 (little endian): this header, then one uint64 per metric of
// the group, in the group's order, holding a value of the metric's result type (fp32 and
// fp64 as their bit patterns in the low bits). Streamers write one report per sampling
// period, a query one report for its begin-end window.
struct CounterReportHeader {
    uint16_t kind;          // kReportSample or kReportQuery
    uint16_t size;          // bytes of the whole report
    uint32_t group_id;      // the group's first device-wide metric id
    uint32_t metric_count;  // words that follow
    uint32_t sequence;      // streamers: report number since open (wraps); queries: 0
    uint64_t begin_ticks;   // the window (begin, end] in device ticks
    uint64_t end_ticks;
};
static_assert(sizeof(CounterReportHeader) == 32);

// Report kinds (distinct from the tracer's record kinds).
inline constexpr uint16_t kReportSample = 0x10;
inline constexpr uint16_t kReportQuery = 0x11;

// Bytes of a report of `group`.
inline size_t report_size(const MetricGroup& group) {
    return sizeof(CounterReportHeader) + group.metrics().size() * sizeof(uint64_t);
}

// Writes a report of `group` at `out` (report_size(group) bytes).
void write_report(const MetricGroup& group, uint16_t kind, uint32_t sequence, uint64_t begin_ticks, uint64_t end_ticks,
                  std::span<const uint64_t> values, uint8_t* out);

// A metric value (zet_typed_value_t: its result type, then the value in 8 bytes).
struct TypedValue {
    uint32_t type;
    uint32_t reserved;
    uint64_t bits;
};
static_assert(sizeof(TypedValue) == 16);

// What calculate() computes (zet_metric_group_calculation_type_t).
enum class Calculation : uint32_t { values = 0, max_values = 1 };

// The metric values of `raw`, whole reports of `group`: one value per metric per report
// (`values`), or one per metric, the largest of every report (`max_values`). Appends to
// *out. INVALID_SIZE for empty raw data; INVALID_ARGUMENT for raw data that is not whole
// reports of this group (a header of another group, size or count wrong, a partial report),
// nothing appended then; INVALID_ENUMERATION for another calculation.
ze_result_t calculate(const MetricGroup& group, uint32_t calculation, std::span<const uint8_t> raw,
                      std::vector<TypedValue>* out);

}  // namespace zehal::metrics
