// The software device's clock: ticks at its own frequency from a chosen start value.
#pragma once

#include <cstdint>

#include "common/clock.hpp"
#include "hal/timestamps.hpp"

namespace zehal::sim {

// Mask of `bits` valid bits: bits >= 64 ? ~0 : (1 << bits) - 1.
constexpr uint64_t valid_mask(uint32_t bits) noexcept { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// Device ticks as a function of host time. Immutable, so safe from every thread.
class SimClock {
public:
    SimClock(uint64_t hz, uint64_t start_ticks) noexcept
        : hz_(hz),
          start_ticks_(start_ticks),
          epoch_ns_(host_now_ns()) {}

    // Unmasked ticks at host time `host_ns` (not before creation).
    uint64_t ticks_at(uint64_t host_ns) const noexcept { return linear().ticks_at(host_ns); }
    // Unmasked ticks now.
    uint64_t now() const noexcept { return ticks_at(host_now_ns()); }
    uint64_t hz() const noexcept { return hz_; }
    // The same clock as plain numbers, which another process can read ticks with.
    hal::LinearClock linear() const noexcept { return {hz_, start_ticks_, epoch_ns_}; }

private:
    uint64_t hz_;
    uint64_t start_ticks_;
    uint64_t epoch_ns_;
};

}  // namespace zehal::sim
