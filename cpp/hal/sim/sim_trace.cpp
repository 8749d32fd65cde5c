// The software device's trace side: metric groups, the bounded hardware buffer and the
// asynchronous event source.
#include "hal/sim/sim_trace.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "common/clock.hpp"
#include "hal/trace_buffer.hpp"
#include "hal/trace_record.hpp"

namespace zehal::sim {
namespace {

// Group indices in groups().
enum GroupIndex : uint32_t { kEngineGroup = 0, kAsyncGroup = 1, kExportGroup = 2, kUtilizationGroup = 3 };

// Device-wide metric ids, in group order.
enum MetricId : uint32_t {
    kCommandStart = 0,
    kCommandEnd,
    kCommandBytes,
    kCommandOrdinal,
    kCommandEngine,
    kCommandQueue,
    kCommandType,
    kCommandQueueDepth,
    kAsyncCounter,
    kAsyncPulse,
    kExportWrite,
    kExportMemory,
    kUtilizationBusy,  // the SimCounters metrics from here, in UtilizationMetric order
};

// CommandTrace::command of copies and fills.
constexpr uint32_t kCopyCommand = 0;
constexpr uint32_t kFillCommand = 1;

// Records one command produces: every metric of the engine group.
constexpr size_t kRecordsPerCommand = kAsyncCounter - kCommandStart;

std::vector<hal::MetricGroupInfo> make_groups() {
    std::vector<hal::MetricGroupInfo> g(4);

    // The common engine schema (hal::engine_events_group), then the sim's queue depth.
    g[kEngineGroup] = hal::engine_events_group("Per-command events of the copy and compute engines", kCommandStart);
    g[kEngineGroup].metrics.push_back(hal::make_metric("QueueDepth",
                                                       "Commands still queued behind the command when it completed",
                                                       "engine", hal::kMetricEvent, hal::kUint32, "commands"));

    g[kAsyncGroup] = {
        .name = "AsyncEvents",
        .description = "Asynchronous device events that fire independently of commands",
        .sampling_types = hal::kSamplingTracerBased,
        .type_flags = hal::kGroupOther,
        .domain = 1,
        .first_metric_id = kAsyncCounter,
        .metrics =
            {
                hal::make_metric("AsyncCounter", "Count of asynchronous events, wrapping at 2^32", "async",
                                 hal::kMetricEventExpMonotonicWrapsValue, hal::kUint32, "events"),
                hal::make_metric("AsyncPulse", "A periodic pulse; only its timestamp has meaning", "async",
                                 hal::kMetricEventExpTimestamp, hal::kUint64, ""),
            },
    };

    g[kExportGroup] = hal::export_memory_group(2, kExportWrite);

    g[kUtilizationGroup] = {
        .name = "EngineUtilization",
        .description = "What the copy and compute engines did, sampled by metric queries and streamers",
        .sampling_types = hal::kSamplingEventBased | hal::kSamplingTimeBased,
        .type_flags = hal::kGroupOther,
        .domain = 3,
        .first_metric_id = kUtilizationBusy,
        .metrics =
            {
                hal::make_metric("EngineBusy", "Share of the engines' time spent on copies and fills", "engine",
                                 hal::kMetricRatio, hal::kFp32, "percent"),
                hal::make_metric("GpuTime", "Length of the sampled window", "engine", hal::kMetricDuration,
                                 hal::kUint64, "ns"),
                hal::make_metric("BusyTime", "Time the engines spent on copies and fills", "engine",
                                 hal::kMetricDuration, hal::kUint64, "ns"),
                hal::make_metric("DataCommands", "Copies and fills completed", "engine", hal::kMetricEvent,
                                 hal::kUint64, "commands"),
                hal::make_metric("BytesMoved", "Bytes the copies and fills wrote", "engine", hal::kMetricEvent,
                                 hal::kUint64, "bytes"),
            },
    };
    // Time-based: its streamer reports carry the markers (the metrics layer fills it).
    hal::add_stream_marker(&g[kUtilizationGroup]);
    return g;
}

hal::TraceRecord record(uint16_t kind, uint32_t metric, uint64_t ticks, uint64_t value, uint32_t subdevice) {
    return hal::TraceRecord{kind, static_cast<uint16_t>(sizeof(hal::TraceRecord)), metric, ticks, value, subdevice, 0};
}

class SimTraceImpl final : public SimTrace {
public:
    SimTraceImpl(const SimConfig& config, const SimClock& clock)
        : clock_(clock),
          tick_mask_(valid_mask(config.timestamp_valid_bits)),
          subdevices_(config.subdevices),
          async_rate_(config.async_records_per_s),
          async_burst_(config.async_burst_records),
          buffer_(config.trace_buffer_bytes / sizeof(hal::TraceRecord)),
          counters_(clock, valid_mask(config.timestamp_valid_bits), config.compute_engines + config.copy_engines,
                    kUtilizationGroup) {}

    ~SimTraceImpl() override { stop(); }

    ze_result_t start(std::span<const uint32_t> groups) override {
        uint32_t mask = 0;
        if (ze_result_t r = hal::tracer_group_mask(groups, SimTrace::groups(), &mask); r != ZE_RESULT_SUCCESS) return r;
        std::lock_guard control(control_mu_);
        stop_async();
        {
            std::lock_guard lock(mu_);
            buffer_.clear();
            // Relaxed: every writer of produced_ holds mu_; readers only want a current figure.
            produced_.store(0, std::memory_order_relaxed);
            started_ = mask;
        }
        async_next_ = 0;
        if ((mask & (1u << kAsyncGroup)) && async_burst_ > 0) {
            // The burst is in the buffer (or counted as lost) when start returns.
            std::vector<hal::TraceRecord> batch;
            const uint64_t now = clock_.now();
            emit_async(batch, async_burst_, &async_next_, now, now);
        }
        if ((mask & (1u << kAsyncGroup)) && async_rate_ > 0) {
            async_quit_ = false;
            async_ = std::thread([this] { async_loop(); });
        }
        return ZE_RESULT_SUCCESS;
    }

    ze_result_t stop() override {
        std::lock_guard control(control_mu_);
        {
            std::lock_guard lock(mu_);
            started_ = 0;
        }
        stop_async();
        return ZE_RESULT_SUCCESS;
    }

    size_t drain(void* dst, size_t capacity, uint64_t* lost) override {
        const size_t max_records = dst ? capacity / sizeof(hal::TraceRecord) : 0;
        if (max_records == 0) return 0;
        std::lock_guard lock(mu_);
        return buffer_.drain(static_cast<hal::TraceRecord*>(dst), max_records, lost) * sizeof(hal::TraceRecord);
    }

    uint64_t produced() const override {
        // Relaxed: a statistic; the lock of the writers orders it with the records.
        return produced_.load(std::memory_order_relaxed);
    }

    size_t capacity() const override { return buffer_.slots() * sizeof(hal::TraceRecord); }

    SimCounters* counters() override { return &counters_; }

    void on_command(const CommandTrace& c) override {
        counters_.on_command(c.command == kCopyCommand || c.command == kFillCommand,
                             c.subdevice == hal::kRootDevice || c.subdevice == 0, c.start_ticks, c.end_ticks, c.bytes);
        const uint64_t start = c.start_ticks & tick_mask_;
        const uint64_t end = c.end_ticks & tick_mask_;
        std::lock_guard lock(mu_);
        if (!(started_ & (1u << kEngineGroup))) return;
        const uint64_t id = next_command_++;
        const hal::TraceRecord recs[kRecordsPerCommand] = {
            record(hal::kRecordSample, kCommandStart, start, id, c.subdevice),
            record(hal::kRecordSample, kCommandEnd, end, id, c.subdevice),
            record(hal::kRecordSample, kCommandBytes, end, c.bytes, c.subdevice),
            record(hal::kRecordSample, kCommandOrdinal, end, c.ordinal, c.subdevice),
            record(hal::kRecordSample, kCommandEngine, end, c.engine, c.subdevice),
            record(hal::kRecordSample, kCommandQueue, end, c.queue_id, c.subdevice),
            record(hal::kRecordSample, kCommandType, end, c.command, c.subdevice),
            record(hal::kRecordSample, kCommandQueueDepth, end, c.queue_depth, c.subdevice),
        };
        // A command's records go in together or not at all, so readers find them adjacent.
        push_locked(recs, kRecordsPerCommand, true);
    }

    void on_export_write(uint32_t group, uint32_t first_word, uint64_t ticks, uint32_t subdevice) override {
        if (group != kExportGroup) return;
        const hal::TraceRecord r = record(hal::kRecordExportWrite, kExportWrite, ticks & tick_mask_, first_word,
                                          subdevice);
        std::lock_guard lock(mu_);
        if (!(started_ & (1u << kExportGroup))) return;
        push_locked(&r, 1, true);
    }

private:
    // Appends `n` records (all or none when `whole`, else as many as fit); counts the rest
    // as dropped in front of the next record that gets in. Caller holds mu_.
    void push_locked(const hal::TraceRecord* recs, size_t n, bool whole) {
        // Relaxed: see produced().
        produced_.store(produced_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
        buffer_.push(recs, n, whole);
    }

    // Writes `n` records of the asynchronous source into `out`, numbered from `*next`,
    // their ticks spread evenly over (from_ticks, to_ticks], alternating its two metrics.
    // No division per record: the ticks advance by a fixed-point step.
    void make_async(hal::TraceRecord* out, size_t n, uint64_t* next, uint64_t from_ticks, uint64_t to_ticks) {
        const unsigned __int128 step = (static_cast<unsigned __int128>(to_ticks - from_ticks) << 32) / n;
        unsigned __int128 at = 0;
        uint64_t k = *next;
        uint32_t sub = subdevices_ ? static_cast<uint32_t>(k % subdevices_) : hal::kRootDevice;
        for (size_t i = 0; i < n; ++i, ++k) {
            at += step;
            const uint64_t ticks = (from_ticks + static_cast<uint64_t>(at >> 32)) & tick_mask_;
            out[i] = (k & 1) == 0 ? record(hal::kRecordSample, kAsyncCounter, ticks, (k >> 1) & 0xFFFFFFFFu, sub)
                                  : record(hal::kRecordSample, kAsyncPulse, ticks, 0, sub);
            if (subdevices_ && ++sub == subdevices_) sub = 0;
        }
        *next = k;
    }

    // Emits `n` records whose ticks spread over (from_ticks, to_ticks], in chunks pushed
    // as they are made; false once the asynchronous group is no longer started.
    bool emit_async(std::vector<hal::TraceRecord>& batch, uint64_t n, uint64_t* next, uint64_t from_ticks,
                    uint64_t to_ticks) {
        for (uint64_t done = 0; done < n;) {
            const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n - done, kAsyncChunk));
            const uint64_t a = from_ticks +
                               static_cast<uint64_t>(static_cast<unsigned __int128>(to_ticks - from_ticks) * done / n);
            const uint64_t b = from_ticks +
                               static_cast<uint64_t>(static_cast<unsigned __int128>(to_ticks - from_ticks) *
                                                     (done + chunk) / n);
            batch.resize(chunk);
            make_async(batch.data(), chunk, next, a, b);
            std::lock_guard lock(mu_);
            if (!(started_ & (1u << kAsyncGroup))) return false;
            push_locked(batch.data(), chunk, false);
            done += chunk;
        }
        return true;
    }

    // The asynchronous source: every period, the records due at the configured rate,
    // with ticks spread over the period.
    void async_loop() {
        using namespace std::chrono;
        const uint64_t t0 = host_now_ns();
        uint64_t last = t0;
        uint64_t emitted = 0;
        std::vector<hal::TraceRecord> batch;
        std::unique_lock wait_lock(async_mu_);
        while (!async_cv_.wait_for(wait_lock, microseconds(500), [this] { return async_quit_; })) {
            wait_lock.unlock();
            const uint64_t now = host_now_ns();
            const uint64_t due = static_cast<uint64_t>(static_cast<unsigned __int128>(now - t0) * async_rate_ /
                                                       1'000'000'000u);
            if (due > emitted)
                emit_async(batch, due - emitted, &async_next_, clock_.ticks_at(last), clock_.ticks_at(now));
            emitted = due;
            last = now;
            wait_lock.lock();
        }
    }

    // Stops and joins the asynchronous source. Caller holds control_mu_.
    void stop_async() {
        if (!async_.joinable()) return;
        {
            std::lock_guard lock(async_mu_);
            async_quit_ = true;
        }
        async_cv_.notify_all();
        async_.join();
    }

    static constexpr size_t kAsyncChunk = 4096;

    const SimClock clock_;
    const uint64_t tick_mask_;
    const uint32_t subdevices_;
    const uint64_t async_rate_;
    const uint64_t async_burst_;

    std::mutex control_mu_;  // serialises start and stop

    mutable std::mutex mu_;    // the hardware buffer and the started groups
    hal::TraceBuffer buffer_;  // the hardware buffer
    uint32_t started_ = 0;     // bit per started group
    uint64_t next_command_ = 0;
    std::atomic<uint64_t> produced_{0};

    SimCounters counters_;

    std::thread async_;
    uint64_t async_next_ = 0;  // number of the next asynchronous record (start, then the source thread)
    std::mutex async_mu_;
    std::condition_variable async_cv_;
    bool async_quit_ = false;
};

}  // namespace

const std::vector<hal::MetricGroupInfo>& SimTrace::groups() {
    static const std::vector<hal::MetricGroupInfo> all = make_groups();
    return all;
}

uint32_t SimTrace::export_group() { return kExportGroup; }

std::unique_ptr<SimTrace> SimTrace::create(const SimConfig& config, const SimClock& clock) {
    return std::make_unique<SimTraceImpl>(config, clock);
}

}  // namespace zehal::sim
