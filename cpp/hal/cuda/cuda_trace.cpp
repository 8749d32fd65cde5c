#include "hal/cuda/cuda_trace.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string_view>

#include "common/clock.hpp"
#include "hal/cuda/cupti_hub.hpp"
#include "hal/trace_buffer.hpp"
#include "hal/trace_record.hpp"

namespace zehal::cuda {
namespace {

// Group indices in groups().
enum GroupIndex : uint32_t { kEngineGroup = 0, kExportGroup = 1 };

// Device-wide metric ids, in group order.
enum MetricId : uint32_t {
    kCommandStart = 0,
    kCommandEnd,
    kCommandBytes,
    kCommandOrdinal,
    kCommandEngine,
    kCommandQueue,
    kCommandType,
    kExportWrite,
    kExportMemory,
};

// Records one command produces: every metric of the engine group.
constexpr size_t kRecordsPerCommand = kExportWrite - kCommandStart;

// Hardware buffer and export probe ring sizes.
constexpr size_t kBufferRecords = (1u << 20) / sizeof(hal::TraceRecord);
constexpr size_t kProbeSlots = 1024;
// CUPTI's own thread hands over only full buffers; the drain loop asks for the completed
// records of partly filled ones, at most this often (more often stalls the traced
// program's launches on CUPTI's locks for nothing).
constexpr uint64_t kFlushEveryNs = 5'000'000;

std::vector<hal::MetricGroupInfo> make_groups() {
    std::vector<hal::MetricGroupInfo> g(2);
    g[kEngineGroup] = hal::engine_events_group(
        "Per-command events of the GPU (kernels, memcpy, memset) from CUPTI activity records; the id is CUPTI's "
        "correlation id, the engine index the CUDA channel",
        kCommandStart);
    g[kExportGroup] = hal::export_memory_group(1, kExportWrite);
    return g;
}

hal::TraceRecord record(uint16_t kind, uint32_t metric, uint64_t ticks, uint64_t value) {
    return hal::TraceRecord{
        kind, static_cast<uint16_t>(sizeof(hal::TraceRecord)), metric, ticks, value, hal::kRootDevice, 0};
}

class CudaTraceImpl final : public CudaTrace, public CuptiSink {
public:
    CudaTraceImpl(const DriverApi& api, int ordinal, DeviceClock* clock, ExportProbeSlot* probes)
        : api_(api),
          ordinal_(ordinal),
          clock_(clock),
          probes_(probes),
          probe_state_(kProbeSlots, 0),
          buffer_(kBufferRecords) {}

    ~CudaTraceImpl() override {
        stop();
#ifdef ZEHAL_HAVE_CUPTI_H
        if (hub_) hub_->detach(ordinal_);
#endif
        api_.cuMemFreeHost(probes_);
    }

#ifdef ZEHAL_HAVE_CUPTI_H
    void set_hub(CuptiHub* hub) {
        hub_ = hub;
        hub_->attach(ordinal_, this);
    }
#endif

    ze_result_t start(std::span<const uint32_t> groups) override {
        uint32_t mask = 0;
        if (ze_result_t r = hal::tracer_group_mask(groups, CudaTrace::groups(), &mask); r != ZE_RESULT_SUCCESS)
            return r;
        std::lock_guard control(control_mu_);
        // A fit of the clock must exist before CUPTI's callbacks convert timestamps.
        uint64_t ticks = 0;
        if (ze_result_t r = clock_->to_ticks(host_now_ns(), &ticks); r != ZE_RESULT_SUCCESS) return r;
        stop_locked();
        {
            std::lock_guard lock(mu_);
            buffer_.clear();
            // Probes still in flight belong to the previous run: dropped when they land.
            for (uint8_t& s : probe_state_) s = s ? kProbeStale : kProbeFree;
            // Relaxed: every writer of produced_ holds mu_; readers only want a current figure.
            produced_.store(0, std::memory_order_relaxed);
            run_start_ns_ = host_now_ns();
            set_started_locked(mask);
        }
#ifdef ZEHAL_HAVE_CUPTI_H
        if (mask & (1u << kEngineGroup)) {
            if (ze_result_t r = hub_->start(); r != ZE_RESULT_SUCCESS) {
                std::lock_guard lock(mu_);
                set_started_locked(0);
                return r;
            }
            hub_started_ = true;
            hub_running_.store(true, std::memory_order_relaxed);
        }
#endif
        return ZE_RESULT_SUCCESS;
    }

    ze_result_t stop() override {
        std::lock_guard control(control_mu_);
        stop_locked();
        return ZE_RESULT_SUCCESS;
    }

    size_t drain(void* dst, size_t capacity, uint64_t* lost) override {
        const size_t max_records = dst ? capacity / sizeof(hal::TraceRecord) : 0;
        if (max_records == 0) return 0;
#ifdef ZEHAL_HAVE_CUPTI_H
        // Relaxed: a hint; start and stop publish the hub state under control_mu_, and a
        // stale answer costs one flush too many or too few.
        if (hub_running_.load(std::memory_order_relaxed)) {
            const uint64_t now = host_now_ns();
            if (now - last_flush_ns_ >= kFlushEveryNs) {
                last_flush_ns_ = now;  // only the single drainer touches it
                hub_->flush();
            }
        }
#endif
        std::lock_guard lock(mu_);
        harvest_probes_locked();
        return buffer_.drain(static_cast<hal::TraceRecord*>(dst), max_records, lost) * sizeof(hal::TraceRecord);
    }

    uint64_t produced() const override {
        // Relaxed: a statistic; the lock of the writers orders it with the records.
        return produced_.load(std::memory_order_relaxed);
    }

    size_t capacity() const override { return kBufferRecords * sizeof(hal::TraceRecord); }

    bool probes_exports() const noexcept override {
        // Relaxed: see set_started_locked.
        return exporting_.load(std::memory_order_relaxed);
    }

    ExportProbeSlot* reserve_export_probe() override {
        std::lock_guard lock(mu_);
        if (!(started_ & (1u << kExportGroup))) return nullptr;
        if (probe_head_ - probe_tail_ == kProbeSlots) {
            // Every slot in flight: the write's record is lost.
            produced_.store(produced_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
            buffer_.lose(1);
            return nullptr;
        }
        const size_t i = probe_head_++ % kProbeSlots;
        probe_state_[i] = kProbeLive;
        ExportProbeSlot* slot = &probes_[i];
        // The device writes the slot; clear the flag it sets last before handing it out.
        *const_cast<volatile uint32_t*>(&slot->ready) = 0;
        return slot;
    }

    // A GPU command CUPTI reported for this device (any thread; CUPTI's callbacks). CUPTI
    // hands records over late, up to its next flush: one of a command that began before this
    // run started belongs to an earlier run (or to none) and is dropped, so that a run holds
    // only commands that began while it ran (a tracer handed over from a trace, a restart).
    void on_activity(const CuptiActivity& a) override {
        uint64_t ticks[2] = {a.start_ns, a.end_ns};
        if (!clock_->to_ticks_fitted(ticks)) return;
        const uint64_t start = ticks[0], end = ticks[1];
        const hal::TraceRecord recs[kRecordsPerCommand] = {
            record(hal::kRecordSample, kCommandStart, start, a.correlation),
            record(hal::kRecordSample, kCommandEnd, end, a.correlation),
            record(hal::kRecordSample, kCommandBytes, end, a.bytes),
            record(hal::kRecordSample, kCommandOrdinal, end, a.ordinal),
            record(hal::kRecordSample, kCommandEngine, end, a.engine),
            record(hal::kRecordSample, kCommandQueue, end, a.stream),
            record(hal::kRecordSample, kCommandType, end, a.type),
        };
        std::lock_guard lock(mu_);
        if (!(started_ & (1u << kEngineGroup)) || a.start_ns < run_start_ns_) return;
        push_locked(recs, kRecordsPerCommand);
    }

    // Records CUPTI itself dropped (its buffers were full).
    void on_cupti_dropped(size_t n) override {
        std::lock_guard lock(mu_);
        if (!(started_ & (1u << kEngineGroup))) return;
        produced_.store(produced_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        buffer_.lose(n);
    }

private:
    static constexpr uint8_t kProbeFree = 0;
    static constexpr uint8_t kProbeLive = 1;
    static constexpr uint8_t kProbeStale = 2;

    // Caller holds control_mu_.
    void stop_locked() {
#ifdef ZEHAL_HAVE_CUPTI_H
        // CUPTI's last records land while the engine group still counts as started.
        if (hub_started_) {
            hub_running_.store(false, std::memory_order_relaxed);
            hub_->stop();
            hub_started_ = false;
        }
#endif
        std::lock_guard lock(mu_);
        harvest_probes_locked();
        set_started_locked(0);
    }

    // Records which groups run. Caller holds mu_.
    void set_started_locked(uint32_t mask) {
        started_ = mask;
        // Relaxed: a hint for launches, which then ask reserve_export_probe under mu_; a launch
        // racing a start or stop may be probed or not, as it may land before or after either.
        exporting_.store((mask & (1u << kExportGroup)) != 0, std::memory_order_relaxed);
    }

    // Appends `n` records, all or none; counts them as dropped in front of the next record
    // that gets in when they do not fit. Caller holds mu_.
    void push_locked(const hal::TraceRecord* recs, size_t n) {
        // Relaxed: see produced().
        produced_.store(produced_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        buffer_.push(recs, n, true);
    }

    // Moves landed export probes into the buffer and frees their slots. Caller holds mu_.
    void harvest_probes_locked() {
        for (size_t p = probe_tail_; p != probe_head_; ++p) {
            const size_t i = p % kProbeSlots;
            if (probe_state_[i] == kProbeFree) continue;
            ExportProbeSlot* slot = &probes_[i];
            // Acquire: the ticks and word the device wrote before the flag are seen.
            if (std::atomic_ref<uint32_t>(slot->ready).load(std::memory_order_acquire) == 0) continue;
            if (probe_state_[i] == kProbeLive && (started_ & (1u << kExportGroup))) {
                const hal::TraceRecord r = record(hal::kRecordExportWrite, kExportWrite,
                                                  *const_cast<volatile uint64_t*>(&slot->ticks),
                                                  *const_cast<volatile uint32_t*>(&slot->word));
                push_locked(&r, 1);
            }
            probe_state_[i] = kProbeFree;
        }
        while (probe_tail_ != probe_head_ && probe_state_[probe_tail_ % kProbeSlots] == kProbeFree) ++probe_tail_;
    }

    const DriverApi& api_;
    const int ordinal_;
    DeviceClock* const clock_;
#ifdef ZEHAL_HAVE_CUPTI_H
    CuptiHub* hub_ = nullptr;
    bool hub_started_ = false;              // guarded by control_mu_
    std::atomic<bool> hub_running_{false};  // hub_started_, for the drainer
    uint64_t last_flush_ns_ = 0;
#endif

    std::mutex control_mu_;  // serialises start and stop

    mutable std::mutex mu_;          // everything below
    ExportProbeSlot* const probes_;  // pinned, mapped
    std::vector<uint8_t> probe_state_;
    size_t probe_head_ = 0;               // next slot to hand out (a position; slot = position % kProbeSlots)
    size_t probe_tail_ = 0;               // oldest slot not yet free
    hal::TraceBuffer buffer_;             // the hardware buffer
    uint32_t started_ = 0;                // bit per started group
    uint64_t run_start_ns_ = 0;           // host ns (CLOCK_MONOTONIC_RAW) at the last start
    std::atomic<bool> exporting_{false};  // started_ has the export group, read without mu_
    std::atomic<uint64_t> produced_{0};
};

}  // namespace

const std::vector<hal::MetricGroupInfo>& CudaTrace::groups() {
    static const std::vector<hal::MetricGroupInfo> all = make_groups();
    return all;
}

uint32_t CudaTrace::export_group() { return kExportGroup; }

std::unique_ptr<CudaTrace> CudaTrace::create(const DriverApi& api, int ordinal, DeviceClock* clock, std::string* why) {
#ifdef ZEHAL_HAVE_CUPTI_H
    const CuptiApi* cupti = cupti_api(why);
    if (!cupti) return nullptr;
    void* probes = nullptr;
    if (CUresult r = api.cuMemHostAlloc(&probes, kProbeSlots * sizeof(ExportProbeSlot),
                                        CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
        r != CUDA_SUCCESS) {
        *why = "no pinned memory for export probes: " + error_name(api, r);
        return nullptr;
    }
    std::memset(probes, 0, kProbeSlots * sizeof(ExportProbeSlot));
    CuptiHub& hub = CuptiHub::instance(*cupti);
    auto trace = std::make_unique<CudaTraceImpl>(api, ordinal, clock, static_cast<ExportProbeSlot*>(probes));
    trace->set_hub(&hub);
    return trace;
#else
    (void)api;
    (void)ordinal;
    (void)clock;
    *why = "built without CUPTI headers (cupti_activity.h)";
    return nullptr;
#endif
}

}  // namespace zehal::cuda
