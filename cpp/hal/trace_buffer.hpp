// The bounded record buffer behind a backend's TraceSource: drops what does not fit and
// remembers where each loss happened, so a drain reports every gap at its place.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "hal/trace_record.hpp"

namespace zehal::hal {

// Not thread-safe: the owning TraceSource serialises every call (its writers' lock).
class TraceBuffer {
public:
    // A buffer of `slots` records (at least one).
    explicit TraceBuffer(size_t slots) : slots_(std::max<size_t>(1, slots)), records_(slots_), lost_before_(slots_, 0) {}

    // Records the buffer holds when full.
    size_t slots() const noexcept { return slots_; }

    // Empties the buffer and forgets the losses.
    void clear() noexcept {
        head_ = 0;
        count_ = 0;
        lost_tail_ = 0;
        std::fill(lost_before_.begin(), lost_before_.end(), 0);
    }

    // Appends `n` records; those that do not fit are dropped and counted (all `n` when
    // `whole` and they do not all fit, so a group of records is never split).
    void push(const TraceRecord* records, size_t n, bool whole) noexcept {
        size_t fit = std::min(n, slots_ - count_);
        if (whole && fit < n) fit = 0;
        for (size_t i = 0; i < fit; ++i) {
            const size_t slot = (head_ + count_) % slots_;
            records_[slot] = records[i];
            lost_before_[slot] = lost_tail_;
            lost_tail_ = 0;
            ++count_;
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
        if (count_ == 0) {
            if (lost) *lost += lost_tail_;
            lost_tail_ = 0;
            return 0;
        }
        if (lost) *lost += lost_before_[head_];
        lost_before_[head_] = 0;
        size_t n = 1;
        const size_t limit = std::min(max_records, count_);
        while (n < limit && lost_before_[(head_ + n) % slots_] == 0) ++n;
        const size_t first = std::min(n, slots_ - head_);
        std::memcpy(out, &records_[head_], first * sizeof(TraceRecord));
        std::memcpy(out + first, records_.data(), (n - first) * sizeof(TraceRecord));
        head_ = (head_ + n) % slots_;
        count_ -= n;
        return n;
    }

private:
    const size_t slots_;
    std::vector<TraceRecord> records_;
    std::vector<uint64_t> lost_before_;  // records dropped just before each slot's record
    size_t head_ = 0;                    // oldest record
    size_t count_ = 0;                   // records held
    uint64_t lost_tail_ = 0;             // records dropped after the newest one
};

}  // namespace zehal::hal
