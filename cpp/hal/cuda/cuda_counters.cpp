// The CUDA device's sampled counters (GpuActivity) from CUPTI's PM sampling.
#include "hal/cuda/cuda_counters.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <ctime>

#include "common/clock.hpp"

namespace zehal::cuda {

namespace {

// A CUPTI parameter structure of `size` bytes (the header's *_STRUCT_SIZE), zeroed.
template <class Params>
Params cupti_params(size_t size) {
    Params p{};
    p.structSize = size;
    return p;
}

// How a group metric is made from the samples a window overlaps.
enum class Combine {
    kLength,    // the window's length in ns
    kSum,       // the raw count, each sample in proportion to the overlap
    kWeighted,  // the raw rate or percentage, averaged with the overlap as weight
    kBusy,      // 100 x (GR active cycles) / (GR elapsed cycles), both summed as kSum
};

// One metric of GpuActivity: its properties and the CUPTI metric it comes from.
struct Column {
    const char* name;
    const char* description;
    uint32_t metric_type;
    uint32_t result_type;
    const char* units;
    Combine combine;
    const char* cupti;  // the CUPTI metric (null for kLength and kBusy)
};

constexpr const char* kGrElapsed = "gr__cycles_elapsed.max";
constexpr const char* kGrActive = "gr__cycles_active.avg";

// The group's metrics, in order.
constexpr Column kColumns[] = {
    {"GpuTime", "Length of the window", hal::kMetricDuration, hal::kUint64, "ns", Combine::kLength, nullptr},
    {"GpuBusy", "Share of the window the graphics/compute engine was active", hal::kMetricRatio, hal::kFp32, "percent",
     Combine::kBusy, nullptr},
    {"SmActiveCycles", "Cycles with at least one warp in flight, summed over the SMs", hal::kMetricEvent, hal::kUint64,
     "cycles", Combine::kSum, "sm__cycles_active.sum"},
    {"SmInstructions", "Warp instructions executed", hal::kMetricEvent, hal::kUint64, "instructions", Combine::kSum,
     "sm__inst_executed.sum"},
    {"SmWarpCycles", "Warps in flight, summed over every cycle and SM", hal::kMetricEvent, hal::kUint64, "warps",
     Combine::kSum, "sm__warps_active.sum"},
    {"DramBytesRead", "Bytes read from device memory", hal::kMetricEvent, hal::kUint64, "bytes", Combine::kSum,
     "dram__bytes_read.sum"},
    {"DramBytesWritten", "Bytes written to device memory", hal::kMetricEvent, hal::kUint64, "bytes", Combine::kSum,
     "dram__bytes_write.sum"},
    {"DramThroughput", "Device memory throughput, of its peak", hal::kMetricRatio, hal::kFp32, "percent",
     Combine::kWeighted, "dram__throughput.avg.pct_of_peak_sustained_elapsed"},
    {"L2Bytes", "Bytes requested from the L2 cache", hal::kMetricEvent, hal::kUint64, "bytes", Combine::kSum,
     "lts__t_bytes.sum"},
    {"PcieBytesRead", "Bytes the GPU read over PCIe (512-byte granularity)", hal::kMetricEvent, hal::kUint64, "bytes",
     Combine::kSum, "pcie__read_bytes.sum"},
    {"PcieBytesWritten", "Bytes the GPU wrote over PCIe (512-byte granularity)", hal::kMetricEvent, hal::kUint64,
     "bytes", Combine::kSum, "pcie__write_bytes.sum"},
    {"GpcFrequency", "Clock of the graphics processing clusters", hal::kMetricThroughput, hal::kUint64, "Hz",
     Combine::kWeighted, "gpc__cycles_elapsed.avg.per_second"},
};
constexpr size_t kMetricCount = std::size(kColumns);
static_assert(CudaCounters::kRawMetrics == 2 + std::count_if(std::begin(kColumns), std::end(kColumns),
                                                             [](const Column& c) { return c.cupti != nullptr; }),
              "a sample holds GR elapsed and active cycles, then each column's CUPTI metric");

// The CUPTI metrics sampled, in the order of a Sample's values: kGrElapsed, kGrActive, then
// each column's own. Built once; CUPTI takes the names as a non-const array it only reads.
const std::vector<const char*>& raw_names() {
    static const std::vector<const char*> names = [] {
        std::vector<const char*> n{kGrElapsed, kGrActive};
        for (const Column& c : kColumns)
            if (c.cupti) n.push_back(c.cupti);
        return n;
    }();
    return names;
}

// Index of column `c`'s CUPTI metric among raw_names().
size_t raw_index(size_t column) {
    size_t i = 2;
    for (size_t c = 0; c < column; ++c)
        if (kColumns[c].cupti) ++i;
    return i;
}

// Hardware buffer CUPTI writes raw samples into; samples a counter image holds.
constexpr size_t kHardwareBufferBytes = 16u << 20;
constexpr uint32_t kImageSamples = 64;
// How often the drain thread decodes while sampling runs.
constexpr auto kDrainEvery = std::chrono::milliseconds(10);

// CLOCK_REALTIME minus CLOCK_MONOTONIC_RAW (host_now_ns), in ns, now.
int64_t realtime_minus_host() {
    const uint64_t before = host_now_ns();
    timespec real{};
    clock_gettime(CLOCK_REALTIME, &real);
    const uint64_t after = host_now_ns();
    const auto real_ns = static_cast<int64_t>(real.tv_sec) * 1'000'000'000 + real.tv_nsec;
    return real_ns - static_cast<int64_t>(before + (after - before) / 2);
}

// The ze_result_t of a CUPTI failure: UNSUPPORTED_FEATURE where the device or the system
// does not let its counters be sampled.
ze_result_t failure(CUptiResult r) {
    switch (r) {
        case CUPTI_ERROR_NOT_SUPPORTED:
        case CUPTI_ERROR_NOT_COMPATIBLE:
        case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
        case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
        case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        default:
            return ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE;
    }
}

// A profiler host object for PM sampling on `chip` with every raw metric added, and its
// one-pass configuration image; CUPTI's error otherwise (*host null).
CUptiResult configure(const CuptiProfilerApi& cupti, const char* chip, const uint8_t* availability,
                      CUpti_Profiler_Host_Object** host, std::vector<uint8_t>* config) {
    auto init = cupti_params<CUpti_Profiler_Host_Initialize_Params>(CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
    init.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
    init.pChipName = chip;
    init.pCounterAvailabilityImage = availability;
    *host = nullptr;
    if (CUptiResult r = cupti.cuptiProfilerHostInitialize(&init); r != CUPTI_SUCCESS) return r;
    const std::vector<const char*>& names = raw_names();
    auto add = cupti_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
        CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
    add.pHostObject = init.pHostObject;
    add.ppMetricNames = const_cast<const char**>(names.data());
    add.numMetrics = names.size();
    auto size = cupti_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
        CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
    size.pHostObject = init.pHostObject;
    CUptiResult r = cupti.cuptiProfilerHostConfigAddMetrics(&add);
    if (r == CUPTI_SUCCESS) r = cupti.cuptiProfilerHostGetConfigImageSize(&size);
    if (r == CUPTI_SUCCESS) {
        config->assign(size.configImageSize, 0);
        auto image = cupti_params<CUpti_Profiler_Host_GetConfigImage_Params>(
            CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
        image.pHostObject = init.pHostObject;
        image.configImageSize = config->size();
        image.pConfigImage = config->data();
        r = cupti.cuptiProfilerHostGetConfigImage(&image);
    }
    if (r == CUPTI_SUCCESS) {
        auto passes = cupti_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
            CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
        passes.configImageSize = config->size();
        passes.pConfigImage = config->data();
        r = cupti.cuptiProfilerHostGetNumOfPasses(&passes);
        if (r == CUPTI_SUCCESS && passes.numOfPasses != 1) r = CUPTI_ERROR_NOT_SUPPORTED;
    }
    if (r != CUPTI_SUCCESS) {
        auto done = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
            CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
        done.pHostObject = init.pHostObject;
        cupti.cuptiProfilerHostDeinitialize(&done);
        return r;
    }
    *host = init.pHostObject;
    return CUPTI_SUCCESS;
}

}  // namespace

// PM sampling of the device, set up at the first use and kept until the counters go (a
// set-up costs about a hundred milliseconds, a start half of one): CUPTI's objects, the
// images CUPTI reads while it samples, and the state of the current run.
struct CudaCounters::Session {
    const CuptiProfilerApi* cupti = nullptr;
    CUpti_PmSampling_Object* object = nullptr;
    CUpti_Profiler_Host_Object* host = nullptr;
    std::vector<uint8_t> config;  // the configuration image; CUPTI reads it while sampling
    std::vector<uint8_t> image;   // the counter image samples are decoded into
    bool running = false;         // started and not stopped
    bool quit = false;            // the drain thread of the run stops
    size_t next = 0;              // first sample of the image not yet taken into samples_
    uint64_t start_ticks = 0;     // device ticks just before the run started
    bool clock_known = false;     // the run's first sample told which clock its samples use
    bool wall_clock = true;       // CLOCK_REALTIME (else CLOCK_MONOTONIC_RAW, zehal's host clock)

    ~Session() {
        if (running) {
            auto stop = cupti_params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
            stop.pPmSamplingObject = object;
            cupti->cuptiPmSamplingStop(&stop);
        }
        if (object) {
            auto disable = cupti_params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
            disable.pPmSamplingObject = object;
            cupti->cuptiPmSamplingDisable(&disable);
        }
        if (host) {
            auto done = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
                CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
            done.pHostObject = host;
            cupti->cuptiProfilerHostDeinitialize(&done);
        }
    }
};

std::string CudaCounters::check(int ordinal, std::string* why) {
    const CuptiProfilerApi* cupti = cupti_profiler_api(why);
    if (!cupti) return {};
    auto init = cupti_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    auto chip = cupti_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    chip.deviceIndex = static_cast<size_t>(ordinal);
    CUptiResult r = cupti->cuptiProfilerInitialize(&init);
    if (r == CUPTI_SUCCESS) r = cupti->cuptiDeviceGetChipName(&chip);
    if (r != CUPTI_SUCCESS) {
        *why = "CUPTI's profiler does not start (CUPTI error " + std::to_string(r) + ")";
        return {};
    }
    CUpti_Profiler_Host_Object* host = nullptr;
    std::vector<uint8_t> config;
    if ((r = configure(*cupti, chip.pChipName, nullptr, &host, &config)) != CUPTI_SUCCESS) {
        *why = std::string("PM sampling of ") + chip.pChipName +
               " lacks the GpuActivity metrics in one pass (CUPTI error " + std::to_string(r) + ")";
        return {};
    }
    auto done = cupti_params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    done.pHostObject = host;
    cupti->cuptiProfilerHostDeinitialize(&done);
    return chip.pChipName;
}

std::unique_ptr<CudaCounters> CudaCounters::create(const DriverApi& api, int ordinal, CUcontext ctx, DeviceClock* clock,
                                                   uint32_t group, std::string chip) {
    std::string why;
    const CuptiProfilerApi* cupti = cupti_profiler_api(&why);
    if (!cupti) return nullptr;
    return std::unique_ptr<CudaCounters>(new CudaCounters(api, *cupti, ordinal, ctx, clock, group, std::move(chip)));
}

hal::MetricGroupInfo CudaCounters::group_info(uint32_t domain, uint32_t first_metric_id) {
    hal::MetricGroupInfo g{
        .name = "GpuActivity",
        .description =
            "The GPU's performance counters (SM, device memory, L2, PCIe) sampled by CUPTI every millisecond",
        .sampling_types = hal::kSamplingEventBased | hal::kSamplingTimeBased,
        .type_flags = hal::kGroupOther,
        .domain = domain,
        .first_metric_id = first_metric_id,
        .metrics = {},
    };
    for (const Column& c : kColumns)
        g.metrics.push_back(hal::make_metric(c.name, c.description, "gpu", c.metric_type, c.result_type, c.units));
    // Time-based: its streamer reports carry the markers (the metrics layer fills it).
    hal::add_stream_marker(&g);
    return g;
}

CudaCounters::CudaCounters(const DriverApi& api, const CuptiProfilerApi& cupti, int ordinal, CUcontext ctx,
                           DeviceClock* clock, uint32_t group, std::string chip)
    : api_(api),
      cupti_(cupti),
      ordinal_(ordinal),
      clock_(clock),
      group_(group),
      chip_(std::move(chip)),
      ctx_(ctx) {}

CudaCounters::~CudaCounters() {
    std::lock_guard use_lock(use_mu_);
    std::unique_lock lock(mu_);
    if (session_ && session_->running) stop(lock);
    ContextScope scope(api_, ctx_);
    session_.reset();
}

uint64_t CudaCounters::now_ticks() const {
    uint64_t host_ns = 0, ticks = 0;
    return clock_->now(&host_ns, &ticks) == ZE_RESULT_SUCCESS ? ticks : 0;
}

ze_result_t CudaCounters::use(bool reading) {
    std::lock_guard use_lock(use_mu_);
    std::unique_lock lock(mu_);
    if (reading) {
        if (readers_ == 0) {
            if (ze_result_t r = start_locked(); r != ZE_RESULT_SUCCESS) return r;
        }
        ++readers_;
        return ZE_RESULT_SUCCESS;
    }
    if (readers_ == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (--readers_ == 0) stop(lock);
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaCounters::set_up_locked() {
    auto s = std::make_unique<Session>();
    s->cupti = &cupti_;
    auto enable = cupti_params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
    enable.deviceIndex = static_cast<size_t>(ordinal_);
    if (CUptiResult r = cupti_.cuptiPmSamplingEnable(&enable); r != CUPTI_SUCCESS) return failure(r);
    s->object = enable.pPmSamplingObject;
    // No counter availability image (it costs more than the rest of the set-up): a counter
    // the device does not offer now fails the configuration below.
    if (CUptiResult r = configure(cupti_, chip_.c_str(), nullptr, &s->host, &s->config); r != CUPTI_SUCCESS)
        return failure(r);
    auto set = cupti_params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
    set.pPmSamplingObject = s->object;
    set.configSize = s->config.size();
    set.pConfig = s->config.data();
    set.hardwareBufferSize = kHardwareBufferBytes;
    set.samplingInterval = kIntervalNs;
    set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
    set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_LATEST;
    if (CUptiResult r = cupti_.cuptiPmSamplingSetConfig(&set); r != CUPTI_SUCCESS) return failure(r);
    const std::vector<const char*>& names = raw_names();
    auto size = cupti_params<CUpti_PmSampling_GetCounterDataSize_Params>(
        CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
    size.pPmSamplingObject = s->object;
    size.pMetricNames = const_cast<const char**>(names.data());
    size.numMetrics = names.size();
    size.maxSamples = kImageSamples;
    if (CUptiResult r = cupti_.cuptiPmSamplingGetCounterDataSize(&size); r != CUPTI_SUCCESS) return failure(r);
    s->image.assign(size.counterDataSize, 0);
    session_ = std::move(s);
    return ZE_RESULT_SUCCESS;
}

bool CudaCounters::reset_image_locked() const {
    Session& s = *session_;
    auto image = cupti_params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
        CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
    image.pPmSamplingObject = s.object;
    image.counterDataSize = s.image.size();
    image.pCounterData = s.image.data();
    s.next = 0;
    return cupti_.cuptiPmSamplingCounterDataImageInitialize(&image) == CUPTI_SUCCESS;
}

ze_result_t CudaCounters::start_locked() {
    ContextScope scope(api_, ctx_);
    if (!session_) {
        if (ze_result_t r = set_up_locked(); r != ZE_RESULT_SUCCESS) return r;
    }
    Session& s = *session_;
    if (!reset_image_locked()) return ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE;
    uint64_t host_ns = 0;
    if (ze_result_t r = clock_->now(&host_ns, &s.start_ticks); r != ZE_RESULT_SUCCESS) return r;
    auto start = cupti_params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
    start.pPmSamplingObject = s.object;
    if (CUptiResult r = cupti_.cuptiPmSamplingStart(&start); r != CUPTI_SUCCESS) return failure(r);
    s.running = true;
    s.quit = false;
    s.clock_known = false;
    try {
        drainer_ = std::thread([this] { drain_loop(); });
    } catch (...) {
        stop_sampling_locked();
        throw;
    }
    return ZE_RESULT_SUCCESS;
}

void CudaCounters::stop_sampling_locked() {
    auto stop = cupti_params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
    stop.pPmSamplingObject = session_->object;
    cupti_.cuptiPmSamplingStop(&stop);
    session_->running = false;
}

void CudaCounters::stop(std::unique_lock<std::mutex>& lock) {
    session_->quit = true;
    stop_cv_.notify_all();
    std::thread drainer = std::move(drainer_);
    // The drain thread takes mu_: join without it. use_mu_ (held by the caller) keeps
    // another use() from starting a session meanwhile.
    lock.unlock();
    if (drainer.joinable()) drainer.join();
    lock.lock();
    ContextScope scope(api_, ctx_);
    drain_locked();
    stop_sampling_locked();
}

void CudaCounters::drain_loop() {
    // CUPTI decodes in the device's context.
    ContextScope scope(api_, ctx_);
    std::unique_lock lock(mu_);
    while (!session_->quit) {
        drain_locked();
        stop_cv_.wait_for(lock, kDrainEvery, [this] { return session_->quit; });
    }
}

void CudaCounters::drain_locked() const {
    Session& s = *session_;
    for (;;) {
        auto decode = cupti_params<CUpti_PmSampling_DecodeData_Params>(CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
        decode.pPmSamplingObject = s.object;
        decode.pCounterDataImage = s.image.data();
        decode.counterDataImageSize = s.image.size();
        if (cupti_.cuptiPmSamplingDecodeData(&decode) != CUPTI_SUCCESS) return;
        auto info = cupti_params<CUpti_PmSampling_GetCounterDataInfo_Params>(
            CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
        info.pCounterDataImage = s.image.data();
        info.counterDataImageSize = s.image.size();
        if (cupti_.cuptiPmSamplingGetCounterDataInfo(&info) != CUPTI_SUCCESS) return;
        evaluate_locked(s.next, info.numCompletedSamples);
        s.next = info.numCompletedSamples;
        const bool full = decode.decodeStopReason == CUPTI_PM_SAMPLING_DECODE_STOP_REASON_COUNTER_DATA_FULL ||
                          info.numCompletedSamples >= info.numTotalSamples;
        if (!full || !reset_image_locked()) return;
    }
}

void CudaCounters::evaluate_locked(size_t first, size_t completed) const {
    Session& s = *session_;
    const std::vector<const char*>& names = raw_names();
    const int64_t realtime_offset = realtime_minus_host();
    for (size_t i = first; i < completed; ++i) {
        auto info = cupti_params<CUpti_PmSampling_CounterData_GetSampleInfo_Params>(
            CUpti_PmSampling_CounterData_GetSampleInfo_Params_STRUCT_SIZE);
        info.pPmSamplingObject = s.object;
        info.pCounterDataImage = s.image.data();
        info.counterDataImageSize = s.image.size();
        info.sampleIndex = i;
        if (cupti_.cuptiPmSamplingCounterDataGetSampleInfo(&info) != CUPTI_SUCCESS) continue;
        // PM samples carry CUPTI's timestamps: wall-clock ns, or the host clock once a CUPTI
        // activity tracer registered zehal's timestamp callback in the process. The first
        // sample of a run tells which (the one its end is near now), the run keeps it.
        if (!s.clock_known) {
            const auto distance = [](uint64_t a, uint64_t b) { return a > b ? a - b : b - a; };
            const uint64_t host_now = host_now_ns();
            s.wall_clock = distance(info.endTimestamp, host_now + static_cast<uint64_t>(realtime_offset)) <
                           distance(info.endTimestamp, host_now);
            s.clock_known = true;
        }
        const uint64_t to_host = s.wall_clock ? static_cast<uint64_t>(realtime_offset) : 0;
        std::array<uint64_t, 2> ticks{info.startTimestamp - to_host, info.endTimestamp - to_host};
        if (!clock_->to_ticks_fitted(ticks)) continue;
        // The first sample of a run reaches back to before the start: its counts are not
        // of the time it claims.
        if (ticks[0] < s.start_ticks || ticks[1] <= ticks[0]) continue;
        if (!samples_.empty() && ticks[0] < samples_.back().end) continue;
        Sample sample{ticks[0], ticks[1], {}};
        auto eval = cupti_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
            CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
        eval.pHostObject = s.host;
        eval.pCounterDataImage = s.image.data();
        eval.counterDataImageSize = s.image.size();
        eval.rangeIndex = i;
        eval.ppMetricNames = const_cast<const char**>(names.data());
        eval.numMetrics = names.size();
        eval.pMetricValues = sample.raw.data();
        if (cupti_.cuptiProfilerHostEvaluateToGpuValues(&eval) != CUPTI_SUCCESS) continue;
        if (samples_.size() == kHistory) samples_.pop_front();
        samples_.push_back(sample);
    }
}

ze_result_t CudaCounters::window(uint32_t group, uint64_t begin_ticks, uint64_t end_ticks,
                                 std::span<uint64_t> values) const {
    if (group != group_ || values.size() != kMetricCount) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::unique_lock lock(mu_);
    // The sample holding end_ticks is decoded some time after its interval is over: wait
    // for it until kSettleNs of device time have passed since end_ticks (a window already
    // that old is answered at once, so a streamer keeps up with time).
    ContextScope scope(api_, ctx_);
    while (session_ && session_->running && !session_->quit) {
        drain_locked();
        if ((!samples_.empty() && samples_.back().end >= end_ticks) || now_ticks() >= end_ticks + kSettleNs) break;
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::nanoseconds(kIntervalNs / 2));
        lock.lock();
    }
    // Overlap-weighted sums of every raw metric, and the overlap in total.
    std::array<double, kRawMetrics> sum{};
    std::array<double, kRawMetrics> weighted{};
    double overlap_total = 0;
    auto it = std::upper_bound(samples_.begin(), samples_.end(), begin_ticks,
                               [](uint64_t t, const Sample& s) { return t < s.end; });
    for (; it != samples_.end() && it->begin < end_ticks; ++it) {
        const double overlap = static_cast<double>(std::min(it->end, end_ticks) - std::max(it->begin, begin_ticks));
        const double share = overlap / static_cast<double>(it->end - it->begin);
        for (size_t m = 0; m < kRawMetrics; ++m) {
            sum[m] += share * it->raw[m];
            weighted[m] += overlap * it->raw[m];
        }
        overlap_total += overlap;
    }
    lock.unlock();
    const auto count = [](double v) { return static_cast<uint64_t>(std::llround(std::max(v, 0.0))); };
    for (size_t c = 0; c < kMetricCount; ++c) {
        const size_t raw = raw_index(c);
        switch (kColumns[c].combine) {
            case Combine::kLength:
                values[c] = end_ticks - begin_ticks;
                break;
            case Combine::kBusy: {
                const float busy = sum[0] > 0 ? static_cast<float>(100.0 * sum[1] / sum[0]) : 0.0f;
                values[c] = std::bit_cast<uint32_t>(busy);
                break;
            }
            case Combine::kSum:
                values[c] = count(sum[raw]);
                break;
            case Combine::kWeighted: {
                const double mean = overlap_total > 0 ? weighted[raw] / overlap_total : 0.0;
                values[c] = kColumns[c].result_type == hal::kFp32 ? std::bit_cast<uint32_t>(static_cast<float>(mean))
                                                                  : count(mean);
                break;
            }
        }
    }
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::cuda
