// The CUDA device's hardware trace side: its metric groups, a bounded hardware buffer fed
// by CUPTI activity records (kernels, memcpy, memset) and by probes of writes into exported
// memory, drained by one tracer.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hal/cuda/device_clock.hpp"
#include "hal/cuda/device_kernels.hpp"
#include "hal/metric_info.hpp"
#include "hal/trace_source.hpp"

namespace zehal::cuda {

// Implements hal::TraceSource for one CUDA device. Producers: CUPTI's buffer callbacks and
// the queues (export probes); one drainer.
class CudaTrace : public hal::TraceSource {
public:
    // The metric groups, with device-wide metric ids: "EngineEvents" (tracer-based: per
    // kernel, memcpy and memset, start, end, bytes, engine group, queue and command type, as
    // the sim device names them) and "ExportMemory" (tracer-based and EXPORT_DMA_BUF).
    static const std::vector<hal::MetricGroupInfo>& groups();
    // Index in groups() of the export-capable group.
    static uint32_t export_group();

    // A trace source for device `ordinal` whose ticks come from `clock` and whose export
    // probes live in pinned memory of the current context; null (with *why) when CUPTI
    // is not available.
    static std::unique_ptr<CudaTrace> create(const DriverApi& api, int ordinal, DeviceClock* clock, std::string* why);

    // True while the export group is started: only then may a command need a probe. Read
    // without a lock, so a command racing a start or stop may get either answer.
    virtual bool probes_exports() const noexcept = 0;
    // A slot for one export probe when the export group is started, else null (and null,
    // counted as a lost record, when every slot is still in flight).
    virtual ExportProbeSlot* reserve_export_probe() = 0;
};

}  // namespace zehal::cuda
