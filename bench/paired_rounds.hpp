// Two ways of doing the same work, timed in one process: interleaved rounds whose order
// alternates (A then B, B then A, ...), so that neither side always runs first after the
// other, and the best round of each. Used by the Level Zero benchmarks, which link the
// public C++ API only.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

// Exits with the call and its result when a Level Zero call fails.
#define ZEHAL_BENCH_ZE_CHECK(call)                                          \
    do {                                                                    \
        ze_result_t r_ = (call);                                            \
        if (r_ != ZE_RESULT_SUCCESS) {                                      \
            std::fprintf(stderr, "%s failed: 0x%x\n", #call, unsigned(r_)); \
            std::exit(1);                                                   \
        }                                                                   \
    } while (0)

namespace zehal::bench {

// Seconds per call of `f`: the mean over `iters` calls.
inline double seconds_per_call(const std::function<void()>& f, int iters) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i) f();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / iters;
}

// The best seconds per call of each side.
struct PairedTimes {
    double a = 1e30;
    double b = 1e30;
};

// One call of each to warm up, then `rounds` rounds of `iters` calls per side, the side that
// goes first alternating from round to round.
inline PairedTimes paired_rounds(const std::function<void()>& a, const std::function<void()>& b, int rounds,
                                 int iters) {
    PairedTimes best;
    a();
    b();
    for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
            best.a = std::min(best.a, seconds_per_call(a, iters));
            best.b = std::min(best.b, seconds_per_call(b, iters));
        } else {
            best.b = std::min(best.b, seconds_per_call(b, iters));
            best.a = std::min(best.a, seconds_per_call(a, iters));
        }
    }
    return best;
}

}  // namespace zehal::bench
