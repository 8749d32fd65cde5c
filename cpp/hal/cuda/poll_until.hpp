// Waiting for memory the GPU writes. The device writes with DMA, which wakes no futex, so
// waiting is polling, with a back-off.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <thread>

#include "common/clock.hpp"
#include "common/wait_word.hpp"

namespace zehal::cuda {

// Polls `done()` until it is true or `timeout_ns` passed (kWaitForever: no limit); true
// when done.
template <typename Done>
bool poll_until(Done&& done, uint64_t timeout_ns) {
    // Read back to back for kTightNs (a short copy lands inside it: a pause between reads,
    // ~140 cycles on recent x86 cores, would be that much lateness on every round trip;
    // measured on an H100 host, 0.1 µs of a 6.6 µs 64-byte round trip), then spin with
    // pauses until kSpinNs, then yield the core to other threads until kYieldNs, then sleep
    // for 1% of the time waited so far (50 µs to 1 ms): the lateness a sleep adds stays near
    // 1% of a long wait.
    constexpr uint64_t kTightNs = 5'000;
    constexpr uint64_t kSpinNs = 20'000;
    constexpr uint64_t kYieldNs = 20'000'000;
    if (done()) return true;
    const uint64_t start = host_now_ns();
    const uint64_t deadline = deadline_after(timeout_ns);
    unsigned reads = 16;  // reads between two clock reads: back to back at first
    for (;;) {
        for (unsigned i = 0; i < reads; ++i)
            if (done()) return true;
        const uint64_t now = host_now_ns();
        if (now >= deadline) return done();
        const uint64_t waited = now - start;
        if (waited < kTightNs) continue;
        reads = 1;
        if (waited < kSpinNs) {
            cpu_relax();
        } else if (waited < kYieldNs) {
            sched_yield();
        } else {
            const uint64_t nap = std::clamp<uint64_t>(waited / 100, 50'000, 1'000'000);
            std::this_thread::sleep_for(std::chrono::nanoseconds(std::min(nap, deadline - now)));
        }
    }
}

}  // namespace zehal::cuda
