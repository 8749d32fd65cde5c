// Host time: CLOCK_MONOTONIC_RAW nanoseconds, the one host clock of zehal.
#pragma once

#include <cstdint>
#include <ctime>

namespace zehal {

// Nanoseconds of CLOCK_MONOTONIC_RAW now.
inline uint64_t host_now_ns() noexcept {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// Timeout meaning "wait forever" for every host_synchronize-style call (Level Zero's UINT64_MAX).
inline constexpr uint64_t kWaitForever = ~0ull;

}  // namespace zehal
