// A CUDA device's sampled counters: the GPU's performance counters (SM, DRAM, L2, PCIe) read
// by CUPTI's PM sampling at a fixed interval of device time, kept as a history of samples
// from which any window of device time is answered (the event- and time-based group
// "GpuActivity").
#pragma once

#include <array>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "hal/counter_source.hpp"
#include "hal/cuda/cupti_api.hpp"
#include "hal/cuda/device_clock.hpp"
#include "hal/cuda/driver_api.hpp"
#include "hal/metric_info.hpp"

namespace zehal::cuda {

// Implements hal::CounterSource for one CUDA device. The counters are sampled only while a
// streamer or query pool reads them (use): the first reader starts PM sampling, the last
// stops it; samples already taken stay answerable. A window's values are the samples it
// overlaps, each counted in proportion to the overlap (counts) or weighted by it (rates
// and percentages): a window shorter than the sampling interval sees a share of a sample,
// not its own commands alone (docs/metrics.md).
class CudaCounters final : public hal::CounterSource {
public:
    // Device time between two samples. CUPTI spends about 75 us of host time decoding and
    // evaluating one sample (H200), so a finer interval would keep a core busy.
    static constexpr uint64_t kIntervalNs = 1'000'000;
    // Device time after which a moment's samples count as decoded: a window ending later
    // than this before now waits for them no longer. Samples reach the host within a few
    // milliseconds, later on a loaded machine; only a run whose sampling stalled waits this
    // long, once.
    static constexpr uint64_t kSettleNs = 100'000'000;
    // Samples kept for windows in the past (about a minute at kIntervalNs).
    static constexpr size_t kHistory = 1u << 16;

    // Whether device `ordinal`'s counters can be sampled as the group: its chip's name, or
    // empty with *why when libcupti lacks PM sampling or a metric of the group does not
    // exist on this chip in one pass. Checks on the host only (it initialises CUPTI's
    // profiler, tens of milliseconds): whether the device lets its counters be sampled is
    // known at the first use.
    static std::string check(int ordinal, std::string* why);
    // The counters of device `ordinal` of chip `chip` (check), in context `ctx` (the
    // device's primary context, retained by the device), timestamps from `clock`, as group
    // `group` of the device's groups. Null when libcupti lacks PM sampling.
    static std::unique_ptr<CudaCounters> create(const DriverApi& api, int ordinal, CUcontext ctx, DeviceClock* clock,
                                                uint32_t group, std::string chip);
    // The group these counters fill, with domain `domain` and device-wide metric ids from
    // `first_metric_id`.
    static hal::MetricGroupInfo group_info(uint32_t domain, uint32_t first_metric_id);

    ~CudaCounters() override;
    CudaCounters(const CudaCounters&) = delete;
    CudaCounters& operator=(const CudaCounters&) = delete;

    uint64_t now_ticks() const override;
    // Waits (until kSettleNs after `end_ticks`) for the samples that cover `end_ticks` while
    // sampling runs; time not covered by any sample counts as idle.
    ze_result_t window(uint32_t group, uint64_t begin_ticks, uint64_t end_ticks,
                       std::span<uint64_t> values) const override;
    // UNSUPPORTED_FEATURE when the device does not let its counters be sampled (CUPTI's
    // reason in the log), DEPENDENCY_UNAVAILABLE when CUPTI fails to start.
    ze_result_t use(bool reading) override;

    // CUPTI metrics a sample holds.
    static constexpr size_t kRawMetrics = 12;

private:
    // One PM sample: its device time [begin, end) and its CUPTI metrics' values.
    struct Sample {
        uint64_t begin;
        uint64_t end;
        std::array<double, kRawMetrics> raw;
    };
    struct Session;
    CudaCounters(const DriverApi& api, const CuptiProfilerApi& cupti, int ordinal, CUcontext ctx, DeviceClock* clock,
                 uint32_t group, std::string chip);

    // Enables and configures PM sampling (session_). Caller holds mu_, context current.
    ze_result_t set_up_locked();
    // Empties the counter image; false when CUPTI fails. Caller holds mu_.
    bool reset_image_locked() const;
    // Starts a run (setting up first if needed) and its drain thread. Caller holds mu_.
    ze_result_t start_locked();
    // Stops the run's sampling (set-up kept). Caller holds mu_, context current.
    void stop_sampling_locked();
    // Stops the run and its drain thread, keeping the samples and the set-up. Caller
    // holds the lock (released while the drain thread is joined).
    void stop(std::unique_lock<std::mutex>& lock);
    // Decodes what the hardware buffer holds into samples_. Caller holds mu_.
    void drain_locked() const;
    // Appends the completed samples of the session's counter image from `first`. Caller holds mu_.
    void evaluate_locked(size_t first, size_t completed) const;
    // The drain thread: decodes every few milliseconds while sampling runs.
    void drain_loop();

    const DriverApi& api_;
    const CuptiProfilerApi& cupti_;
    const int ordinal_;
    DeviceClock* const clock_;
    const uint32_t group_;
    const std::string chip_;
    const CUcontext ctx_;

    std::mutex use_mu_;  // serialises use(): a session starts or stops at a time
    mutable std::mutex mu_;
    std::condition_variable stop_cv_;
    uint32_t readers_ = 0;                // streamers and query pools reading; guarded by mu_
    std::unique_ptr<Session> session_;    // from the first use on; guarded by mu_
    mutable std::deque<Sample> samples_;  // by begin, oldest first; guarded by mu_
    std::thread drainer_;
};

}  // namespace zehal::cuda
