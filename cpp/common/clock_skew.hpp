// A host clock off by a fixed offset and running at another rate: the test-only clock skew
// of traces (ZEHAL_TEST_CLOCK_SKEW, docs/tracing.md), which makes a process read its host
// clock as another node's would read.
#pragma once

#include <cstdint>

namespace zehal {

// raw + offset + raw × drift / 10⁹, the product rounded towards −∞ (as the tracing side's
// Python clock does, so both give the same ns). Immutable, safe from every thread.
struct ClockSkew {
    int64_t offset_ns = 0;  // added to every reading
    int64_t drift_ppb = 0;  // rate error in parts per billion

    // Whether readings are changed at all.
    bool active() const noexcept { return offset_ns != 0 || drift_ppb != 0; }
    // `raw_ns` of the unskewed clock, on the skewed one.
    int64_t apply(uint64_t raw_ns) const noexcept {
        const auto raw = static_cast<int64_t>(raw_ns);
        if (!active()) return raw;
        const __int128 product = static_cast<__int128>(raw) * drift_ppb;
        __int128 shift = product / 1'000'000'000;
        if (product % 1'000'000'000 < 0) --shift;
        return raw + offset_ns + static_cast<int64_t>(shift);
    }
};

// The skew ZEHAL_TEST_CLOCK_SKEW gives this process: entry k of its comma-separated
// "offset_ns:drift_ppm" list for the rank k an MPI launcher (Open MPI, MPICH, PMIx, Slurm)
// started it as, entry 0 without a launcher. None when unset, empty or malformed (the
// tracing side reports a malformed value).
ClockSkew test_clock_skew();

}  // namespace zehal
