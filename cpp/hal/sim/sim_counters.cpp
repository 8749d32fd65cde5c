// The software device's sampled counters (EngineUtilization).
#include "hal/sim/sim_counters.hpp"

#include <algorithm>
#include <bit>

namespace zehal::sim {

SimCounters::SimCounters(const SimClock& clock, uint64_t tick_mask, uint32_t engines, uint32_t group)
    : clock_(clock),
      tick_mask_(tick_mask),
      engines_(std::max(engines, 1u)),
      group_(group) {}

void SimCounters::on_command(bool moves_data, bool first_part, uint64_t start_ticks, uint64_t end_ticks,
                             uint64_t bytes) {
    if (!moves_data) return;
    std::lock_guard lock(mu_);
    // Read under the lock, so the history stays ordered and a window that ends at a tick
    // read later (now_ticks) holds every completion recorded before it.
    const uint64_t at = clock_.now();
    if (done_.size() == kHistory) done_.pop_front();
    done_.push_back({at, end_ticks - std::min(start_ticks, end_ticks), bytes, first_part ? 1u : 0u});
}

ze_result_t SimCounters::use(bool reading) {
    // Relaxed: a hint for the engines, as SimTraceSource::active; a command racing with the
    // first reader may go unaligned.
    if (reading)
        readers_.fetch_add(1, std::memory_order_relaxed);
    else
        readers_.fetch_sub(1, std::memory_order_relaxed);
    return ZE_RESULT_SUCCESS;
}

bool SimCounters::in_use() const noexcept {
    // Relaxed: see use().
    return readers_.load(std::memory_order_relaxed) > 0;
}

uint64_t SimCounters::now_ticks() const {
    std::lock_guard lock(mu_);
    return clock_.now() & tick_mask_;
}

ze_result_t SimCounters::window(uint32_t group, uint64_t begin_ticks, uint64_t end_ticks,
                                std::span<uint64_t> values) const {
    if (group != group_ || values.size() != kUtilMetricCount) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    uint64_t busy = 0, bytes = 0, commands = 0, begin = 0, end = 0;
    {
        std::lock_guard lock(mu_);
        const uint64_t now = clock_.now();
        end = unwrap(end_ticks & tick_mask_, now);
        begin = unwrap(begin_ticks & tick_mask_, end);
        auto first = std::upper_bound(done_.begin(), done_.end(), begin,
                                      [](uint64_t t, const Completion& c) { return t < c.at; });
        for (auto it = first; it != done_.end() && it->at <= end; ++it) {
            busy += it->busy;
            bytes += it->bytes;
            commands += it->command;
        }
    }
    const uint64_t span = end - begin;
    const auto ns = [&](uint64_t ticks) {
        return static_cast<uint64_t>(static_cast<unsigned __int128>(ticks) * 1'000'000'000u / clock_.hz());
    };
    const float percent = span ? static_cast<float>(static_cast<double>(busy) * 100.0 /
                                                    (static_cast<double>(span) * engines_))
                               : 0.0f;
    values[kUtilBusyPercent] = std::bit_cast<uint32_t>(percent);
    values[kUtilGpuTime] = ns(span);
    values[kUtilBusyTime] = ns(busy);
    values[kUtilDataCommands] = commands;
    values[kUtilBytesMoved] = bytes;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::sim
