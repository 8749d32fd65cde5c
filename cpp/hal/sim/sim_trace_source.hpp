// The trace source a sim device hands out: SimTrace behind a switch that tells the engines
// whether a tracer is running.
#pragma once

#include <atomic>

#include "hal/sim/sim_trace.hpp"

namespace zehal::sim {

// Forwards every call to the device's SimTrace and keeps `active()` current, so that the
// engines can align the ticks of traced commands, and of commands while the sampled counters
// are read, on tick boundaries (docs/timestamps.md).
class SimTraceSource final : public hal::TraceSource {
public:
    explicit SimTraceSource(SimTrace& trace) : trace_(trace) {}

    ze_result_t start(std::span<const uint32_t> groups) override {
        const ze_result_t r = trace_.start(groups);
        // Relaxed: a hint for the engines; a command racing with start may go unaligned,
        // as it may go untraced.
        if (r == ZE_RESULT_SUCCESS) active_.store(true, std::memory_order_relaxed);
        return r;
    }
    ze_result_t stop() override {
        active_.store(false, std::memory_order_relaxed);
        return trace_.stop();
    }
    size_t drain(void* dst, size_t capacity, uint64_t* lost) override { return trace_.drain(dst, capacity, lost); }
    uint64_t produced() const override { return trace_.produced(); }
    size_t capacity() const override { return trace_.capacity(); }

    // True while started, or while the sampled counters are read.
    bool active() const noexcept { return active_.load(std::memory_order_relaxed) || trace_.counters()->in_use(); }

private:
    SimTrace& trace_;
    std::atomic<bool> active_{false};
};

}  // namespace zehal::sim
