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

// Host ns of device `ticks` from the reference `s` (a clock of `hz`, ticks wrapping at
// `mask`): the tick difference is taken modulo the wrap and read as signed, so ticks a
// little before the reference convert too.
uint64_t host_ns_of(const Decoder::Sync& s, uint64_t ticks, uint64_t hz, uint64_t mask) {
    if (!s.valid || hz == 0) return 0;
    const uint64_t ahead = (ticks - s.ticks) & mask;
    if (ahead <= mask / 2)
        return s.host_ns + static_cast<uint64_t>(static_cast<unsigned __int128>(ahead) * 1'000'000'000u / hz);
    const uint64_t behind = (s.ticks - ticks) & mask;
    const uint64_t ns = static_cast<uint64_t>(static_cast<unsigned __int128>(behind) * 1'000'000'000u / hz);
    return s.host_ns > ns ? s.host_ns - ns : 0;
}

// Walks raw records in order, one pass per call. Reads only inside [0, size): every field
// is copied out after the record's bounds were checked.
struct RecordWalk {
    const uint8_t* bytes;
    size_t size;
    const std::vector<uint32_t>& selected;  // decodable index -> position in the subset
    Decoder::Sync start;                    // clock reference before the first record
    uint64_t hz;
    uint64_t mask;
    uint32_t subdevices;

    // Hands each entry (up to `limit`) with its set to `emit`; stops before the entry past
    // the limit or at the first record that cannot be decoded.
    template <typename Emit>
    Pass run(uint64_t limit, Emit&& emit) const {
        Pass p;
        p.sync = start;
        size_t off = 0;
        while (off < size) {
            uint16_t rsize = 0;
            if (!record_size(off, &rsize)) {
                p.corrupt = true;
                break;
            }
            uint16_t kind = 0;
            std::memcpy(&kind, bytes + off, 2);
            if (kind >= hal::kRecordSample && kind <= hal::kRecordExportWrite) {
                if (rsize < kRecordV1) {
                    p.corrupt = true;
                    break;
                }
                hal::TraceRecord r;
                std::memcpy(&r, bytes + off, kRecordV1);
                if (kind == hal::kRecordClockSync) {
                    p.sync = Decoder::Sync{r.value, r.ticks & mask, true};
                } else if (kind == hal::kRecordSample || kind == hal::kRecordExportWrite) {
                    if (!entry(r, limit, &p, emit)) break;
                }
            }
            off += rsize;
        }
        p.consumed = off;
        return p;
    }

private:
    // The size of the record at `off`, when its header and its whole length fit.
    bool record_size(size_t off, uint16_t* rsize) const {
        if (size - off < kHeader) return false;
        std::memcpy(rsize, bytes + off + 2, 2);
        return *rsize >= kHeader && *rsize <= size - off;
    }
    // Takes the entry of sample or export-write record `r`; false to stop the pass (a
    // corrupt record, marked in *p, or the entry past the limit).
    template <typename Emit>
    bool entry(const hal::TraceRecord& r, uint64_t limit, Pass* p, Emit& emit) const {
        const bool on_sub = r.subdevice != hal::kRootDevice;
        if (r.metric >= selected.size() || (on_sub && r.subdevice >= subdevices)) {
            p->corrupt = true;
            return false;
        }
        if (selected[r.metric] == kNotSelected) return true;
        if (p->entries == limit) return false;  // where the next call starts
        MetricEntry e{};
        e.value = r.value;
        e.timestamp = host_ns_of(p->sync, r.ticks & mask, hz, mask);
        e.metric_index = selected[r.metric];
        e.on_subdevice = on_sub ? 1 : 0;
        e.subdevice_id = on_sub ? r.subdevice : 0;
        emit(e, on_sub ? r.subdevice : 0u);
        ++p->entries;
        return true;
    }
};

// Counting: totals per set and in all into the caller's counters (contract §5.4).
ze_result_t count_entries(const RecordWalk& walk, uint32_t sets, uint32_t* set_count, uint32_t* entries_per_set,
                          uint32_t* entry_count) {
    std::vector<uint64_t> per_set(sets, 0);
    const Pass p = walk.run(~0ull, [&](const MetricEntry&, uint32_t set) { ++per_set[set]; });
    if (*set_count == 0) {
        *set_count = sets;
    } else {
        *set_count = std::min(*set_count, sets);
        if (entries_per_set)
            for (uint32_t s = 0; s < *set_count; ++s)
                entries_per_set[s] = static_cast<uint32_t>(std::min<uint64_t>(per_set[s], 0xFFFFFFFFu));
    }
    if (*entry_count == 0) *entry_count = static_cast<uint32_t>(std::min<uint64_t>(p.entries, 0xFFFFFFFFu));
    return p.corrupt ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

// Decoding: up to `limit` entries laid out set by set into `entries`; per-set counts into
// `per_set`. One pass with one set; else a counting pass, then a placing one.
Pass place_entries(const RecordWalk& walk, uint32_t sets, uint64_t limit, MetricEntry* entries,
                   std::vector<uint64_t>* per_set) {
    per_set->assign(sets, 0);
    if (sets == 1) return walk.run(limit, [&](const MetricEntry& e, uint32_t) { entries[(*per_set)[0]++] = e; });
    const Pass p = walk.run(limit, [&](const MetricEntry&, uint32_t set) { ++(*per_set)[set]; });
    std::vector<uint64_t> at(sets, 0);
    for (uint32_t s = 1; s < sets; ++s) at[s] = at[s - 1] + (*per_set)[s - 1];
    if (p.entries) walk.run(p.entries, [&](const MetricEntry& e, uint32_t set) { entries[at[set]++] = e; });
    return p;
}

}  // namespace

ze_result_t Decoder::create(const std::shared_ptr<Tracer>& tracer, std::shared_ptr<Decoder>* out) {
    if (!tracer || tracer->closed()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    Sync start;
    if (tracer->device()->global_timestamps(&start.host_ns, &start.ticks) == ZE_RESULT_SUCCESS) start.valid = true;
    std::shared_ptr<Decoder> d(new (std::nothrow)
                                   Decoder(tracer->decodable_metrics(), tracer->device()->properties(), start));
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

ze_result_t Decoder::select(std::span<const Metric* const> metrics, std::vector<uint32_t>* selected,
                            Sync* start) const {
    std::lock_guard lock(mu_);
    if (closed_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    selected->assign(metrics_.size(), kNotSelected);
    if (metrics.empty()) {
        for (uint32_t i = 0; i < metrics_.size(); ++i) (*selected)[i] = i;
    } else {
        for (uint32_t k = 0; k < metrics.size(); ++k) {
            if (!metrics[k]) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
            auto it = std::find_if(metrics_.begin(), metrics_.end(),
                                   [&](const MetricRef& m) { return m.get() == metrics[k]; });
            if (it == metrics_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
            uint32_t& slot = (*selected)[static_cast<size_t>(it - metrics_.begin())];
            if (slot != kNotSelected) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
            slot = k;
        }
    }
    *start = sync_;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Decoder::decode(size_t* raw_size, const void* raw, std::span<const Metric* const> metrics,
                            uint32_t* set_count, uint32_t* entries_per_set, uint32_t* entry_count,
                            MetricEntry* entries) {
    if (!raw_size || !set_count || !entry_count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    // No data (a read that found none yet) decodes to no entries; raw may then be null.
    if (!raw && *raw_size != 0) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const bool counting = *set_count == 0 || *entry_count == 0;
    if (!counting && !entries) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;

    std::vector<uint32_t> selected;
    Sync start;
    if (ze_result_t r = select(metrics, &selected, &start); r != ZE_RESULT_SUCCESS) return r;
    const RecordWalk walk{
        static_cast<const uint8_t*>(raw), *raw_size, selected, start, timer_hz_, tick_mask_, subdevices_};
    if (counting) return count_entries(walk, sets_, set_count, entries_per_set, entry_count);

    std::vector<uint64_t> per_set;
    const Pass p = place_entries(walk, sets_, *entry_count, entries, &per_set);
    *entry_count = static_cast<uint32_t>(p.entries);
    *set_count = std::min(*set_count, sets_);
    if (entries_per_set)
        for (uint32_t s = 0; s < *set_count; ++s) entries_per_set[s] = static_cast<uint32_t>(per_set[s]);
    *raw_size = p.consumed;
    {
        // The clock reference carries over to the next call.
        std::lock_guard lock(mu_);
        sync_ = p.sync;
    }
    return p.corrupt ? ZE_RESULT_ERROR_INVALID_ARGUMENT : ZE_RESULT_SUCCESS;
}

}  // namespace zehal::metrics
