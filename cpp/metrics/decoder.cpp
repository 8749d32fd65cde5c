#include "metrics/decoder.hpp"

#include <algorithm>
#include <cstring>

#include "hal/trace_record.hpp"

namespace zehal::metrics {
namespace {

constexpr uint32_t kNotSelected = 0xFFFFFFFFu;
constexpr size_t kHeader = 4;
constexpr size_t kRecordV1 = sizeof(hal::TraceRecord);

uint64_t mask_of(uint32_t bits) { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// What one pass over the raw data found.
struct Pass {
    size_t consumed = 0;   // bytes up to the end of the last record taken
    uint64_t entries = 0;  // entries taken
    bool corrupt = false;  // stopped at data that cannot be decoded
    Decoder::Sync sync;    // clock reference after the consumed bytes
};

}  // namespace

ze_result_t Decoder::create(const std::shared_ptr<Tracer>& tracer, std::shared_ptr<Decoder>* out) {
    if (!tracer || tracer->closed()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    Sync start;
    if (tracer->device()->global_timestamps(&start.host_ns, &start.ticks) == ZE_RESULT_SUCCESS) start.valid = true;
    std::shared_ptr<Decoder> d(new (std::nothrow) Decoder(tracer->decodable_metrics(), tracer->device()->properties(), start));
    if (!d) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    *out = std::move(d);
    return ZE_RESULT_SUCCESS;
}

Decoder::Decoder(std::vector<MetricRef> metrics, const hal::DeviceProperties& props, Sync start)
    : metrics_(std::move(metrics)),
      sets_(std::max<uint32_t>(1, props.subdevices)),
      subdevices_(props.subdevices),
      timer_hz_(props.timer_hz),
      tick_mask_(mask_of(props.timestamp_valid_bits)),
      sync_(start) {}

ze_result_t Decoder::destroy() {
    std::lock_guard lock(mu_);
    if (closed_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    closed_ = true;
    metrics_.clear();
    return ZE_RESULT_SUCCESS;
}

bool Decoder::closed() const {
    std::lock_guard lock(mu_);
    return closed_;
}

ze_result_t Decoder::decodable_metrics(uint32_t* count, const Metric** out) const {
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::lock_guard lock(mu_);
    if (closed_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    const uint32_t total = static_cast<uint32_t>(metrics_.size());
    if (*count == 0) {
        *count = total;
        return ZE_RESULT_SUCCESS;
    }
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *count = std::min(*count, total);
    for (uint32_t i = 0; i < *count; ++i) out[i] = metrics_[i].get();
    return ZE_RESULT_SUCCESS;
}

std::vector<MetricRef> Decoder::metrics() const {
    std::lock_guard lock(mu_);
    return metrics_;
}

ze_result_t Decoder::decode(size_t* raw_size, const void* raw, std::span<const Metric* const> metrics,
                            uint32_t* set_count, uint32_t* entries_per_set, uint32_t* entry_count,
                            MetricEntry* entries) {
    if (!raw_size || !set_count || !entry_count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*raw_size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (!raw) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const bool counting = *set_count == 0 || *entry_count == 0;
    if (!counting && !entries) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;

    Sync start;
    size_t decodable = 0;
    std::vector<uint32_t> selected;
    {
        std::lock_guard lock(mu_);
        if (closed_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        decodable = metrics_.size();
        selected.assign(decodable, kNotSelected);
        if (metrics.empty()) {
            for (uint32_t i = 0; i < decodable; ++i) selected[i] = i;
        } else {
            for (uint32_t k = 0; k < metrics.size(); ++k) {
                if (!metrics[k]) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
                auto it = std::find_if(metrics_.begin(), metrics_.end(),
                                       [&](const MetricRef& m) { return m.get() == metrics[k]; });
                if (it == metrics_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
                uint32_t& slot = selected[static_cast<size_t>(it - metrics_.begin())];
                if (slot != kNotSelected) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
                slot = k;
            }
        }
        start = sync_;
    }

    const auto* bytes = static_cast<const uint8_t*>(raw);
    const size_t size = *raw_size;
    const uint64_t hz = timer_hz_;
    const uint64_t mask = tick_mask_;

    // Host ns of device `ticks` from the reference `s`: the tick difference is taken modulo
    // the wrap and read as signed, so ticks a little before the reference convert too.
    auto to_host_ns = [hz, mask](const Sync& s, uint64_t ticks) -> uint64_t {
        if (!s.valid || hz == 0) return 0;
        const uint64_t ahead = (ticks - s.ticks) & mask;
        if (ahead <= mask / 2) {
            return s.host_ns + static_cast<uint64_t>(static_cast<unsigned __int128>(ahead) * 1'000'000'000u / hz);
        }
        const uint64_t behind = (s.ticks - ticks) & mask;
        const uint64_t ns = static_cast<uint64_t>(static_cast<unsigned __int128>(behind) * 1'000'000'000u / hz);
        return s.host_ns > ns ? s.host_ns - ns : 0;
    };

    // One pass: walks records in order, hands each entry (up to `limit`) with its set to
    // `emit`, and stops before the entry past the limit or at the first record that
    // cannot be decoded. Reads only inside
    // [0, size): every field is copied out after the record's bounds were checked.
    auto walk = [&](uint64_t limit, auto&& emit) {
        Pass p;
        p.sync = start;
        size_t off = 0;
        while (off < size) {
            if (size - off < kHeader) {
                p.corrupt = true;
                break;
            }
            uint16_t kind = 0, rsize = 0;
            std::memcpy(&kind, bytes + off, 2);
            std::memcpy(&rsize, bytes + off + 2, 2);
            if (rsize < kHeader || rsize > size - off) {
                p.corrupt = true;
                break;
            }
            if (kind >= hal::kRecordSample && kind <= hal::kRecordExportWrite) {
                if (rsize < kRecordV1) {
                    p.corrupt = true;
                    break;
                }
                hal::TraceRecord r;
                std::memcpy(&r, bytes + off, kRecordV1);
                if (kind == hal::kRecordClockSync) {
                    p.sync = Sync{r.value, r.ticks & mask, true};
                } else if (kind == hal::kRecordSample || kind == hal::kRecordExportWrite) {
                    const bool on_sub = r.subdevice != hal::kRootDevice;
                    if (r.metric >= decodable || (on_sub && r.subdevice >= subdevices_)) {
                        p.corrupt = true;
                        break;
                    }
                    if (selected[r.metric] != kNotSelected) {
                        // The entry past the limit is where the next call starts.
                        if (p.entries == limit) break;
                        MetricEntry e{};
                        e.value = r.value;
                        e.timestamp = to_host_ns(p.sync, r.ticks & mask);
                        e.metric_index = selected[r.metric];
                        e.on_subdevice = on_sub ? 1 : 0;
                        e.subdevice_id = on_sub ? r.subdevice : 0;
                        emit(e, on_sub ? r.subdevice : 0u);
                        ++p.entries;
                    }
                }
            }
            off += rsize;
        }
        p.consumed = off;
        return p;
    };

    if (counting) {
        std::vector<uint64_t> per_set(sets_, 0);
        const Pass p = walk(~0ull, [&](const MetricEntry&, uint32_t set) { ++per_set[set]; });
        if (*set_count == 0) {
            *set_count = sets_;
        } else {
            *set_count = std::min(*set_count, sets_);
            if (entries_per_set)
                for (uint32_t s = 0; s < *set_count; ++s)
                    entries_per_set[s] = static_cast<uint32_t>(std::min<uint64_t>(per_set[s], 0xFFFFFFFFu));
        }
        if (*entry_count == 0) *entry_count = static_cast<uint32_t>(std::min<uint64_t>(p.entries, 0xFFFFFFFFu));
        return p.corrupt ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
    }

    const uint64_t limit = *entry_count;
    Pass p;
    std::vector<uint64_t> per_set(sets_, 0);
    if (sets_ == 1) {
        p = walk(limit, [&](const MetricEntry& e, uint32_t) { entries[per_set[0]++] = e; });
    } else {
        // Count per set first, then place each set's entries after the sets before it.
        p = walk(limit, [&](const MetricEntry&, uint32_t set) { ++per_set[set]; });
        std::vector<uint64_t> at(sets_, 0);
        for (uint32_t s = 1; s < sets_; ++s) at[s] = at[s - 1] + per_set[s - 1];
        if (p.entries) walk(p.entries, [&](const MetricEntry& e, uint32_t set) { entries[at[set]++] = e; });
    }
    *entry_count = static_cast<uint32_t>(p.entries);
    *set_count = std::min(*set_count, sets_);
    if (entries_per_set)
        for (uint32_t s = 0; s < *set_count; ++s) entries_per_set[s] = static_cast<uint32_t>(per_set[s]);
    *raw_size = p.consumed;
    {
        std::lock_guard lock(mu_);
        sync_ = p.sync;
    }
    return p.corrupt ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

}  // namespace zehal::metrics
