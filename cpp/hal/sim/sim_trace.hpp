// The software device's hardware trace side: its metric groups, the bounded hardware
// buffer the engines and the asynchronous source write into, and export-memory events.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hal/metric_info.hpp"
#include "hal/sim/sim_clock.hpp"
#include "hal/sim/sim_counters.hpp"
#include "hal/sim/sim_config.hpp"
#include "hal/trace_source.hpp"

namespace zehal::sim {

// CommandTrace::command of a kernel launch.
inline constexpr uint32_t kTraceKernel = 3;

// What an engine reports of one command when it completes.
struct CommandTrace {
    uint32_t ordinal;      // engine group
    uint32_t engine;       // engine index
    uint64_t queue_id;     // device-unique queue number
    uint32_t command;      // 0 copy, 1 fill, 2 barrier, 3 kernel (kTraceKernel)
    uint64_t bytes;        // bytes written
    uint64_t start_ticks;  // unmasked device ticks
    uint64_t end_ticks;
    uint32_t queue_depth;  // commands still queued behind it
    uint32_t subdevice;    // hal::kRootDevice or the sub-device index
};

// Implements hal::TraceSource for one sim device. Thread-safe producers (engines, the
// asynchronous source); one drainer.
class SimTrace : public hal::TraceSource {
public:
    // The sim device's metric groups, with device-wide metric ids: a tracer-based group
    // of engine events, a tracer-based asynchronous source, and a tracer-based group that
    // is also EXPORT_DMA_BUF (whose metrics include one of type EXP_EXPORT_DMA_BUF), and an
    // event- and time-based group of sampled counters (SimCounters).
    static const std::vector<hal::MetricGroupInfo>& groups();
    // Index in groups() of the export-capable group.
    static uint32_t export_group();

    static std::unique_ptr<SimTrace> create(const SimConfig& config, const SimClock& clock);

    // Records of one completed command (when an engine-event group is started); every
    // command also counts in the sampled counters.
    virtual void on_command(const CommandTrace& c) = 0;
    // The sampled counters of the event- and time-based group.
    virtual SimCounters* counters() = 0;
    // A device command wrote into memory exported by `group`; `first_word` is the first
    // 32-bit word it wrote (when that group is started).
    virtual void on_export_write(uint32_t group, uint32_t first_word, uint64_t ticks, uint32_t subdevice) = 0;
};

}  // namespace zehal::sim
