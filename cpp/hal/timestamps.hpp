// Device timestamp arithmetic (contract §3): ticks to ns, elapsed ticks across a wrap,
// and the mapping of kernel timestamps into the host domain. Pure functions.
#pragma once

#include <cstdint>

#include "hal/types.hpp"

namespace zehal::hal {

// Largest value of a counter with `bits` valid bits: bits >= 64 ? ~0 : (1 << bits) - 1.
constexpr uint64_t timestamp_max(uint32_t bits) noexcept { return bits >= 64 ? ~0ull : (1ull << bits) - 1; }

// `ticks` of a `hz` clock in ns, rounded down: ticks × 1e9 / hz (no overflow).
constexpr uint64_t ticks_to_ns(uint64_t ticks, uint64_t hz) noexcept {
    return hz == 0 ? 0 : static_cast<uint64_t>(static_cast<unsigned __int128>(ticks) * 1'000'000'000u / hz);
}

// Ticks from `start` to `end` of a counter with `bits` valid bits, across one wrap:
// end >= start ? end - start : (max - start) + end + 1.
constexpr uint64_t elapsed_ticks(uint64_t start, uint64_t end, uint32_t bits) noexcept {
    const uint64_t max = timestamp_max(bits);
    return end >= start ? end - start : (max - start) + end + 1;
}

// ns a counter of `bits` valid bits at `hz` takes to wrap (saturated at UINT64_MAX).
constexpr uint64_t wrap_period_ns(uint64_t hz, uint32_t bits) noexcept {
    if (hz == 0) return ~0ull;
    const unsigned __int128 ticks = static_cast<unsigned __int128>(timestamp_max(bits)) + 1;
    const unsigned __int128 ns = ticks * 1'000'000'000u / hz;
    return ns > ~0ull ? ~0ull : static_cast<uint64_t>(ns);
}

// A device clock that runs at `hz` from `start_ticks` at host instant `epoch_ns` (host ns of
// CLOCK_MONOTONIC_RAW, which every process of the host reads alike): what another process
// needs to read the same device's ticks (the sim device's clock; IPC event pools carry it).
struct LinearClock {
    uint64_t hz = 0;  // 0: no such clock is known
    uint64_t start_ticks = 0;
    uint64_t epoch_ns = 0;

    // Unmasked ticks at host instant `host_ns` (the start ticks before the epoch).
    constexpr uint64_t ticks_at(uint64_t host_ns) const noexcept {
        const uint64_t dt = host_ns > epoch_ns ? host_ns - epoch_ns : 0;
        return start_ticks + static_cast<uint64_t>(static_cast<unsigned __int128>(dt) * hz / 1'000'000'000u);
    }
};

// A (host ns, device ticks) pair sampled together: the anchor of synchronized timestamps.
struct TimestampReference {
    uint64_t host_ns = 0;
    uint64_t ticks = 0;  // masked to the valid bits of the timestamps it maps
};

// Host ns of device tick `ticks` (masked to `bits`) relative to `ref`, in the host domain:
// ref.host_ns + ((ticks - ref.ticks) mod wrap) × 1e9 / hz.
constexpr uint64_t synchronized_ns(uint64_t ticks, const TimestampReference& ref, uint64_t hz, uint32_t bits) noexcept {
    return ref.host_ns + ticks_to_ns((ticks - ref.ticks) & timestamp_max(bits), hz);
}

// One kernel timestamp packet (device ticks, `bits` valid) in host ns (contract §3):
// global start mapped through `ref`, global end = start + elapsed(global); context start
// equals global start, context end = start + elapsed(context).
constexpr KernelTimestampResult synchronize_packet(const KernelTimestampResult& ticks, const TimestampReference& ref,
                                                   uint64_t hz, uint32_t bits) noexcept {
    const uint64_t start = synchronized_ns(ticks.global_start, ref, hz, bits);
    KernelTimestampResult ns{};
    ns.global_start = start;
    ns.global_end = start + ticks_to_ns(elapsed_ticks(ticks.global_start, ticks.global_end, bits), hz);
    ns.context_start = start;
    ns.context_end = start + ticks_to_ns(elapsed_ticks(ticks.context_start, ticks.context_end, bits), hz);
    return ns;
}

}  // namespace zehal::hal
