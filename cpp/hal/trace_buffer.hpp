// The bounded record buffer behind a backend's TraceSource: drops what does not fit and
// remembers where each loss happened, so a drain reports every gap at its place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "hal/trace_record.hpp"

namespace zehal::hal {

// Not thread-safe: the owning TraceSource serialises every call (its writers' lock).
// Records move in at most two memcpy calls per push or drain (the storage wraps once);
// losses are kept as a short list of gaps, so no call does work per record.
class TraceBuffer {
public:
    // A buffer of `slots` records (at least one).
    explicit TraceBuffer(size_t slots)
        : slots_(std::max<size_t>(1, slots)),
          records_(new TraceRecord[slots_]),
          gaps_(new Gap[slots_]) {}

    // Records the buffer holds when full.
    size_t slots() const noexcept { return slots_; }

    // Records held now.
    size_t size() const noexcept { return static_cast<size_t>(written_ - read_); }

    // Empties the buffer and forgets the losses.
    void clear() noexcept {
        read_ = written_ = 0;
        gap_head_ = gap_count_ = 0;
        lost_tail_ = 0;
    }

    // Appends `n` records; those that do not fit are dropped and counted (all `n` when
    // `whole` and they do not all fit, so a group of records is never split).
    void push(const TraceRecord* records, size_t n, bool whole) noexcept {
        size_t fit = std::min(n, slots_ - size());
        if (whole && fit < n) fit = 0;
        if (fit) {
            if (lost_tail_) {
                // At most one gap per record held, so the gap list never overflows.
                gaps_[(gap_head_ + gap_count_) % slots_] = Gap{written_, lost_tail_};
                ++gap_count_;
                lost_tail_ = 0;
            }
            const size_t at = static_cast<size_t>(written_ % slots_);
            const size_t first = std::min(fit, slots_ - at);
            std::memcpy(&records_[at], records, first * sizeof(TraceRecord));
            std::memcpy(records_.get(), records + first, (fit - first) * sizeof(TraceRecord));
            written_ += fit;
        }
        lost_tail_ += n - fit;
    }

    // Counts `n` records lost before they reached the buffer, at its current end.
    void lose(uint64_t n) noexcept { lost_tail_ += n; }

    // TraceSource::drain: moves up to `max_records` records into `out` and adds to *lost
    // the records lost before them. A batch stops at the next record with losses in front
    // of it, so each gap is reported by the drain that returns the records after it.
    size_t drain(TraceRecord* out, size_t max_records, uint64_t* lost) noexcept {
        if (max_records == 0) return 0;
        if (size() == 0) {
            if (lost) *lost += lost_tail_;
            lost_tail_ = 0;
            return 0;
        }
        if (gap_count_ && gaps_[gap_head_].before == read_) {
            if (lost) *lost += gaps_[gap_head_].lost;
            gap_head_ = (gap_head_ + 1) % slots_;
            --gap_count_;
        }
        size_t n = std::min(max_records, size());
        if (gap_count_) n = std::min<size_t>(n, static_cast<size_t>(gaps_[gap_head_].before - read_));
        const size_t at = static_cast<size_t>(read_ % slots_);
        const size_t first = std::min(n, slots_ - at);
        std::memcpy(out, &records_[at], first * sizeof(TraceRecord));
        std::memcpy(out + first, records_.get(), (n - first) * sizeof(TraceRecord));
        read_ += n;
        return n;
    }

private:
    // `lost` records were dropped just before the record written `before`-th.
    struct Gap {
        uint64_t before;
        uint64_t lost;
    };

    const size_t slots_;
    // Left uninitialised: pages are touched only as records arrive.
    std::unique_ptr<TraceRecord[]> records_;
    std::unique_ptr<Gap[]> gaps_;  // a ring of gaps, oldest first
    size_t gap_head_ = 0;
    size_t gap_count_ = 0;
    uint64_t read_ = 0;       // records drained since clear()
    uint64_t written_ = 0;    // records stored since clear()
    uint64_t lost_tail_ = 0;  // records dropped after the newest one
};

}  // namespace zehal::hal
