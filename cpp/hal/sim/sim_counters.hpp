// The software device's sampled counters: what its engines did, as the event- and
// time-based group EngineUtilization counts it over any window of device time.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>

#include "hal/counter_source.hpp"
#include "hal/sim/sim_clock.hpp"

namespace zehal::sim {

// Values of EngineUtilization, in its metric order.
enum UtilizationMetric : uint32_t {
    kUtilBusyPercent = 0,  // fp32: busy time / (window * engines) * 100
    kUtilGpuTime,          // uint64 ns: length of the window
    kUtilBusyTime,         // uint64 ns: time the engines spent on copies and fills
    kUtilDataCommands,     // uint64: copies and fills completed
    kUtilBytesMoved,       // uint64: bytes they wrote
    kUtilMetricCount,
};

// Implements hal::CounterSource for one sim device. A command counts at the device tick its
// completion is recorded, in the window that holds that tick; the last kHistory completions
// are kept, older ones count in no window.
class SimCounters final : public hal::CounterSource {
public:
    // `group`: index of EngineUtilization in the device's groups; `engines`: the device's
    // engines (all groups); `tick_mask`: the timestamp valid bits' mask.
    SimCounters(const SimClock& clock, uint64_t tick_mask, uint32_t engines, uint32_t group);

    // A command (or one sub-device's part of it) completed: `moves_data` for copies and
    // fills, `first_part` for the part that counts the command once.
    void on_command(bool moves_data, bool first_part, uint64_t start_ticks, uint64_t end_ticks, uint64_t bytes);

    uint64_t now_ticks() const override;
    ze_result_t window(uint32_t group, uint64_t begin_ticks, uint64_t end_ticks,
                       std::span<uint64_t> values) const override;
    ze_result_t use(bool reading) override;
    // True while a streamer or query pool reads the counters: the engines then align
    // commands on tick boundaries (as for a tracer), so that no command completes in the
    // tick of a timestamp written after it, nor before the tick of one written before it.
    bool in_use() const noexcept;

    // Completions kept for windows in the past.
    static constexpr size_t kHistory = 1u << 16;

private:
    struct Completion {
        uint64_t at;       // unmasked ticks when recorded
        uint64_t busy;     // ticks the part ran
        uint64_t bytes;    // bytes it wrote
        uint32_t command;  // 1 when it counts as a command
    };
    // Unmasked ticks of masked `ticks`: the latest not after `now`.
    uint64_t unwrap(uint64_t ticks, uint64_t now) const { return now - ((now - ticks) & tick_mask_); }

    const SimClock clock_;
    const uint64_t tick_mask_;
    const uint32_t engines_;
    const uint32_t group_;
    std::atomic<uint32_t> readers_{0};
    mutable std::mutex mu_;
    std::deque<Completion> done_;  // by `at`, oldest first (recorded under mu_, so in order)
};

}  // namespace zehal::sim
