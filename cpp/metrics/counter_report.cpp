// Counter reports: writing them, and calculating metric values from them.
#include "metrics/counter_report.hpp"

#include <bit>
#include <cstring>

namespace zehal::metrics {
namespace {

// Whether `a` is larger than `b`, both values of result type `type`.
bool larger(uint32_t type, uint64_t a, uint64_t b) {
    switch (type) {
        case hal::kFp32:
            return std::bit_cast<float>(static_cast<uint32_t>(a)) > std::bit_cast<float>(static_cast<uint32_t>(b));
        case hal::kFp64:
            return std::bit_cast<double>(a) > std::bit_cast<double>(b);
        default:
            return a > b;
    }
}

// The header at `raw` if a whole, well-formed report of `group` starts there.
bool read_header(const MetricGroup& group, std::span<const uint8_t> raw, CounterReportHeader* h) {
    if (raw.size() < sizeof *h) return false;
    std::memcpy(h, raw.data(), sizeof *h);
    return (h->kind == kReportSample || h->kind == kReportQuery) && h->size == report_size(group) &&
           h->size <= raw.size() && h->group_id == group.info().first_metric_id &&
           h->metric_count == group.metrics().size();
}

}  // namespace

void write_report(const MetricGroup& group, uint16_t kind, uint32_t sequence, uint64_t begin_ticks, uint64_t end_ticks,
                  std::span<const uint64_t> values, uint8_t* out) {
    const CounterReportHeader h{kind,
                                static_cast<uint16_t>(report_size(group)),
                                group.info().first_metric_id,
                                static_cast<uint32_t>(values.size()),
                                sequence,
                                begin_ticks,
                                end_ticks};
    std::memcpy(out, &h, sizeof h);
    std::memcpy(out + sizeof h, values.data(), values.size_bytes());
}

ze_result_t calculate(const MetricGroup& group, uint32_t calculation, std::span<const uint8_t> raw,
                      std::vector<TypedValue>* out) {
    if (calculation > static_cast<uint32_t>(Calculation::max_values)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (raw.empty()) return ZE_RESULT_ERROR_INVALID_SIZE;
    const auto& metrics = group.metrics();
    const size_t n = metrics.size();
    std::vector<uint64_t> words;
    for (size_t at = 0; at < raw.size();) {
        CounterReportHeader h;
        if (!read_header(group, raw.subspan(at), &h)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        const size_t first = words.size();
        words.resize(first + n);
        std::memcpy(words.data() + first, raw.data() + at + sizeof h, n * sizeof(uint64_t));
        at += h.size;
    }
    const size_t reports = words.size() / n;
    if (calculation == static_cast<uint32_t>(Calculation::max_values)) {
        for (size_t r = 1; r < reports; ++r)
            for (size_t m = 0; m < n; ++m)
                if (larger(metrics[m].info().result_type, words[r * n + m], words[m])) words[m] = words[r * n + m];
        words.resize(n);
    }
    out->reserve(out->size() + words.size());
    for (size_t i = 0; i < words.size(); ++i) {
        const uint32_t type = metrics[i % n].info().result_type;
        uint64_t bits = words[i];
        if (type == hal::kUint32 || type == hal::kFp32) bits &= 0xFFFFFFFFu;
        if (type == hal::kBool8) bits &= 0xFFu;
        out->push_back({type, 0, bits});
    }
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::metrics
