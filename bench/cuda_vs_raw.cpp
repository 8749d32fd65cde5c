// The cuda backend beside the raw CUDA driver API and CUPTI, in the same process and run:
// bandwidth of large copies, the round trip of a 64-byte copy, allocation, tracer overhead.
// The raw side resolves the few driver entry points it needs itself (raw_cuda.hpp: zehal
// builds without linking CUDA).
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "aml/area.hpp"
#include "benchmarks.hpp"
#include "common/clock.hpp"
#include "hal/trace_record.hpp"
#include "metrics/tracer.hpp"
#include "raw_cuda.hpp"
#include "tracer_setup.hpp"

namespace zehal::bench {

namespace {

// --- the raw side ---------------------------------------------------------------------

// The raw side's context, stream and empty kernel on the device zehal measures.
struct RawDevice {
    RawCuda cu;
    CUdevice dev = 0;
    CUcontext ctx = nullptr;
    CUstream stream = nullptr;
    CUmodule module = nullptr;
    CUfunction empty = nullptr;

    bool open(const hal::DeviceProperties& props) {
        if (!cu.load() || !find_cuda_device(cu, props.uuid, &dev)) return false;
        if (cu.cuDevicePrimaryCtxRetain(&ctx, dev) != kCudaSuccess) return false;
        cu.cuCtxPushCurrent(ctx);
        static const char kPtx[] =
            ".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry raw_empty()\n{\n ret;\n}\n";
        return cu.cuStreamCreate(&stream, kStreamNonBlocking) == kCudaSuccess &&
               cu.cuModuleLoadData(&module, kPtx) == kCudaSuccess &&
               cu.cuModuleGetFunction(&empty, module, "raw_empty") == kCudaSuccess;
    }
    ~RawDevice() {
        if (!ctx) return;
        if (module) cu.cuModuleUnload(module);
        if (stream) cu.cuStreamDestroy(stream);
        CUcontext popped = nullptr;
        cu.cuCtxPopCurrent(&popped);
        cu.cuDevicePrimaryCtxRelease(dev);
    }
    bool copy(void* dst, const void* src, size_t n) {
        return cu.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), n, stream) ==
                   kCudaSuccess &&
               cu.cuStreamSynchronize(stream) == kCudaSuccess;
    }
    // Host to device from any host memory (pageable included: the driver stages it).
    bool copy_to_device(void* dst, const void* src, size_t n) {
        return cu.cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(dst), src, n, stream) == kCudaSuccess &&
               cu.cuStreamSynchronize(stream) == kCudaSuccess;
    }
    // The same copy, its completion asked of the stream in a loop (the driver's own
    // completion tracking without its wait policy).
    bool copy_polled(void* dst, const void* src, size_t n) {
        if (cu.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst), reinterpret_cast<CUdeviceptr>(src), n, stream) !=
            kCudaSuccess)
            return false;
        CUresult r;
        while ((r = cu.cuStreamQuery(stream)) == kCudaErrorNotReady) {
        }
        return r == kCudaSuccess;
    }
    // `n` empty kernels, then a synchronize.
    bool kernels(int n) {
        for (int i = 0; i < n; ++i)
            if (cu.cuLaunchKernel(empty, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr) != kCudaSuccess) return false;
        return cu.cuStreamSynchronize(stream) == kCudaSuccess;
    }
};

// CUPTI alone: the activity kinds zehal's tracer enables, with buffers thrown away after
// their records are counted (as the least a CUPTI client does with them).
struct RawCupti {
    void* lib = nullptr;
    using Request = void (*)(uint8_t**, size_t*, size_t*);
    using Complete = void (*)(CUcontext, uint32_t, uint8_t*, size_t, size_t);
    int (*enable)(int) = nullptr;
    int (*disable)(int) = nullptr;
    int (*callbacks)(Request, Complete) = nullptr;
    int (*flush_all)(uint32_t) = nullptr;
    static inline int (*next_record)(uint8_t*, size_t, void**) = nullptr;
    // Records handed to the completion callback since start().
    static inline std::atomic<uint64_t> completed{0};
    static constexpr int kKinds[] = {10 /* concurrent kernel */, 1 /* memcpy */, 2 /* memset */};

    // The CUPTI zehal loaded (found by soname among the loaded libraries).
    bool load() {
        for (const char* name : {"libcupti.so.13", "libcupti.so.12", "libcupti.so"}) {
            lib = dlopen(name, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
            if (lib) break;
        }
        if (!lib) return false;
        enable = reinterpret_cast<int (*)(int)>(dlsym(lib, "cuptiActivityEnable"));
        disable = reinterpret_cast<int (*)(int)>(dlsym(lib, "cuptiActivityDisable"));
        callbacks = reinterpret_cast<int (*)(Request, Complete)>(dlsym(lib, "cuptiActivityRegisterCallbacks"));
        flush_all = reinterpret_cast<int (*)(uint32_t)>(dlsym(lib, "cuptiActivityFlushAll"));
        next_record = reinterpret_cast<int (*)(uint8_t*, size_t, void**)>(dlsym(lib, "cuptiActivityGetNextRecord"));
        return enable && disable && callbacks && flush_all && next_record;
    }
    ~RawCupti() {
        if (lib) dlclose(lib);
    }
    static void request(uint8_t** buffer, size_t* size, size_t* max) {
        *buffer = new uint8_t[1u << 20];
        *size = 1u << 20;
        *max = 0;
    }
    static void complete(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
        uint64_t n = 0;
        for (void* record = nullptr; next_record(buffer, valid, &record) == 0;) ++n;
        // Relaxed: a count read after flush_all(), which returns once the callbacks ran.
        completed.fetch_add(n, std::memory_order_relaxed);
        delete[] buffer;
    }
    bool start() {
        completed.store(0, std::memory_order_relaxed);  // relaxed: see complete()
        if (callbacks(&request, &complete) != 0) return false;
        for (int k : kKinds)
            if (enable(k) != 0) return false;
        return true;
    }
    void stop() {
        flush_all(0);
        for (int k : kKinds) disable(k);
        flush_all(1);
    }
};

// --- measuring ----------------------------------------------------------------------

// The fastest of several rounds: the figure least disturbed by the rest of the machine
// (the timeit convention), taken alike for zehal and its baseline.
double best(const std::vector<double>& v) { return v.empty() ? 0 : *std::min_element(v.begin(), v.end()); }
// The same for rates: the highest of several rounds.
double best_rate(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

struct Freed {
    hal::Device& device;
    void* ptr = nullptr;
    Freed(hal::Device& d, hal::MemoryKind kind, size_t size) : device(d) {
        if (d.allocate(kind, size, 0, 0, 0, &ptr) != ZE_RESULT_SUCCESS) ptr = nullptr;
    }
    ~Freed() {
        if (ptr) device.free(ptr);
    }
};

// ns of one call of `f`, the best of `rounds` rounds of `reps` calls each; 0 when `f` fails.
template <typename F>
double ns_per_call(int rounds, int reps, F&& f) {
    std::vector<double> per;
    for (int r = 0; r < rounds; ++r) {
        const uint64_t t0 = host_now_ns();
        for (int i = 0; i < reps; ++i)
            if (!f()) return 0;
        per.push_back(static_cast<double>(host_now_ns() - t0) / reps);
    }
    return best(per);
}

Row row(const char* suite, std::string name, double value, const char* unit, double baseline, const char* baseline_name,
        bool higher_is_better) {
    Row r;
    r.suite = suite;
    r.name = std::move(name);
    r.value = value;
    r.unit = unit;
    r.baseline = baseline;
    r.baseline_name = baseline_name;
    if (value > 0 && baseline > 0) r.ratio = higher_is_better ? value / baseline : baseline / value;
    return r;
}

// CUPTI alone on `kernels` empty kernels launched back to back: activity records completed
// per second, from the first launch to the return of the forced flush. 0 when fewer records
// than kernels arrived.
double cupti_records_per_s(RawDevice& raw, RawCupti& cupti, int kernels) {
    if (!cupti.start()) return 0;
    const uint64_t t0 = host_now_ns();
    const bool launched = raw.kernels(kernels);
    cupti.flush_all(1);
    const uint64_t t1 = host_now_ns();
    cupti.stop();
    // Relaxed: the callbacks ran before flush_all() returned.
    const uint64_t n = RawCupti::completed.load(std::memory_order_relaxed);
    return launched && n >= static_cast<uint64_t>(kernels) ? static_cast<double>(n) / ((t1 - t0) / 1e9) : 0;
}

// zehal's tracer end to end on the same launches: CUPTI's records through the backend's
// hardware buffer, the tracer's drain thread and ring, to a reader thread; commands (records
// of metric `start_id`, one per command) read per second, from the first launch to the last
// command read. 0 when one was dropped or missing.
double traced_commands_per_s(metrics::Tracer& tracer, uint32_t start_id, RawDevice& raw, int kernels) {
    const uint64_t dropped = tracer.dropped();
    if (tracer.enable(true) != ZE_RESULT_SUCCESS) return 0;
    const uint64_t t0 = host_now_ns();
    std::atomic<uint64_t> t_last{0};
    std::thread reader([&] {
        std::vector<hal::TraceRecord> buf(64u << 10);
        uint64_t commands = 0;
        while (commands < static_cast<uint64_t>(kernels) && host_now_ns() - t0 < 10'000'000'000ull) {
            size_t size = buf.size() * sizeof(hal::TraceRecord);
            if (tracer.read(&size, buf.data()) == ZE_RESULT_NOT_READY || size == 0) {
                std::this_thread::sleep_for(std::chrono::microseconds(50));
                continue;
            }
            for (size_t i = 0; i < size / sizeof(hal::TraceRecord); ++i)
                commands += buf[i].kind == hal::kRecordSample && buf[i].metric == start_id;
        }
        // Relaxed: read after join().
        if (commands >= static_cast<uint64_t>(kernels)) t_last.store(host_now_ns(), std::memory_order_relaxed);
    });
    const bool launched = raw.kernels(kernels);
    reader.join();
    const uint64_t t1 = t_last.load(std::memory_order_relaxed);  // relaxed: after join()
    tracer.disable(true);
    return launched && t1 && tracer.dropped() == dropped ? kernels / ((t1 - t0) / 1e9) : 0;
}

}  // namespace

std::vector<Row> cuda_vs_raw(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device || device->backend_name() != "cuda") return rows;
    RawDevice raw;
    if (!raw.open(device->properties())) return rows;
    hal::Device& dev = *device;
    std::shared_ptr<hal::Queue> queue;
    std::shared_ptr<hal::EventPool> pool;
    hal::EventRef done;
    if (dev.create_queue(hal::kCopyOrdinal, 0, &queue) != ZE_RESULT_SUCCESS ||
        dev.create_event_pool(1, hal::kPoolHostVisible, &pool) != ZE_RESULT_SUCCESS ||
        pool->event(0, &done) != ZE_RESULT_SUCCESS)
        return rows;
    // One zehal request: copy signalling an event, wait for it, reset it for the next.
    auto zehal_copy = [&](void* dst, const void* src, size_t n) {
        return queue->append_copy(dst, src, n, done, {}) == ZE_RESULT_SUCCESS &&
               done->host_synchronize(kWaitForever) == ZE_RESULT_SUCCESS && done->host_reset() == ZE_RESULT_SUCCESS;
    };

    // Bandwidth: zehal and raw alternate round by round over the same buffers.
    const size_t big = options.quick ? (16u << 20) : std::min<size_t>(options.max_bytes, 256u << 20);
    const int rounds = options.quick ? 3 : 9;
    const int reps = options.quick ? 2 : 5;
    struct Case {
        const char* name;
        hal::MemoryKind dst, src;
    } cases[] = {{"pinned host->device", hal::MemoryKind::device, hal::MemoryKind::host},
                 {"device->pinned host", hal::MemoryKind::host, hal::MemoryKind::device},
                 {"device->device", hal::MemoryKind::device, hal::MemoryKind::device}};
    for (const Case& c : cases) {
        Freed dst(dev, c.dst, big), src(dev, c.src, big);
        if (!dst.ptr || !src.ptr) continue;
        zehal_copy(dst.ptr, src.ptr, big);  // warm-up: first touch, page tables
        raw.copy(dst.ptr, src.ptr, big);
        std::vector<double> ours, theirs;
        for (int r = 0; r < rounds; ++r) {
            ours.push_back(ns_per_call(1, reps, [&] { return zehal_copy(dst.ptr, src.ptr, big); }));
            theirs.push_back(ns_per_call(1, reps, [&] { return raw.copy(dst.ptr, src.ptr, big); }));
        }
        const double gb = static_cast<double>(big);
        rows.push_back(row("cuda", std::string(c.name) + " " + std::to_string(big >> 20) + " MiB", gb / best(ours),
                           "GB/s", gb / best(theirs), "cuMemcpyAsync+cuStreamSynchronize", true));
    }

    // System memory (malloc, pageable): zehal stages it through pinned buffers itself; the
    // driver's own pageable path, from the same buffer, is the baseline.
    for (const size_t bytes : {size_t{1} << 20, options.quick ? size_t{16} << 20 : size_t{256} << 20}) {
        Freed dst(dev, hal::MemoryKind::device, bytes);
        std::unique_ptr<char, decltype(&std::free)> src(static_cast<char*>(std::malloc(bytes)), &std::free);
        if (!dst.ptr || !src) continue;
        std::memset(src.get(), 0x5A, bytes);  // first touch: the pages exist before timing
        zehal_copy(dst.ptr, src.get(), bytes);
        raw.copy_to_device(dst.ptr, src.get(), bytes);
        const int n = bytes <= (1u << 20) ? reps * 20 : reps;
        std::vector<double> ours, theirs;
        for (int r = 0; r < rounds; ++r) {
            ours.push_back(ns_per_call(1, n, [&] { return zehal_copy(dst.ptr, src.get(), bytes); }));
            theirs.push_back(ns_per_call(1, n, [&] { return raw.copy_to_device(dst.ptr, src.get(), bytes); }));
        }
        const double gb = static_cast<double>(bytes);
        rows.push_back(row("cuda", "pageable (malloc) host->device " + std::to_string(bytes >> 20) + " MiB",
                           gb / best(ours), "GB/s", gb / best(theirs), "cuMemcpyHtoDAsync+cuStreamSynchronize", true));
    }

    // Round trip of a 64-byte copy request (pinned host -> device).
    {
        Freed dst(dev, hal::MemoryKind::device, 64), src(dev, hal::MemoryKind::host, 64);
        if (dst.ptr && src.ptr) {
            const int n = options.quick ? 200 : 2000;
            std::vector<double> ours, theirs, polled;
            for (int r = 0; r < rounds; ++r) {
                ours.push_back(ns_per_call(1, n, [&] { return zehal_copy(dst.ptr, src.ptr, 64); }));
                theirs.push_back(ns_per_call(1, n, [&] { return raw.copy(dst.ptr, src.ptr, 64); }));
                polled.push_back(ns_per_call(1, n, [&] { return raw.copy_polled(dst.ptr, src.ptr, 64); }));
            }
            rows.push_back(row("cuda", "64 B request round trip", best(ours) / 1e3, "us", best(theirs) / 1e3,
                               "cuMemcpyAsync+cuStreamSynchronize", false));
            rows.push_back(row("cuda", "64 B request round trip", best(ours) / 1e3, "us", best(polled) / 1e3,
                               "cuMemcpyAsync+cuStreamQuery spun", false));
        }
    }

    // Allocation: what an area's mmap+munmap does, beside cuMemAlloc+cuMemFree.
    {
        const int n = options.quick ? 50 : 500;
        constexpr size_t kBytes = 1u << 20;
        const double ours = ns_per_call(rounds, n, [&] {
            void* p = nullptr;
            return dev.allocate(hal::MemoryKind::device, kBytes, 64, 0, 0, &p) == ZE_RESULT_SUCCESS &&
                   dev.free(p) == ZE_RESULT_SUCCESS;
        });
        const double theirs = ns_per_call(rounds, n, [&] {
            CUdeviceptr p = 0;
            return raw.cu.cuMemAlloc(&p, kBytes) == kCudaSuccess && raw.cu.cuMemFree(p) == kCudaSuccess;
        });
        rows.push_back(
            row("cuda", "device allocate+free 1 MiB", ours / 1e3, "us", theirs / 1e3, "cuMemAlloc+cuMemFree", false));

        // The same through a pooled area, beside the raw calls and CUDA's own stream-ordered
        // pool (cuMemAllocFromPoolAsync + cuMemFreeAsync, no synchronization).
        std::shared_ptr<aml::Area> plain;
        std::shared_ptr<aml::Area> pooled;
        CUmemoryPool cuda_pool = nullptr;
        if (aml::Area::create(device, hal::MemoryKind::device, 0, 0, 256, &plain) == ZE_RESULT_SUCCESS &&
            aml::Area::create_pool(plain, 0, 0, &pooled) == ZE_RESULT_SUCCESS &&
            raw.cu.cuDeviceGetDefaultMemPool(&cuda_pool, raw.dev) == kCudaSuccess) {
            const int m = n * 100;
            const auto pool_once = [&] {
                void* p = nullptr;
                return pooled->map(kBytes, &p) == ZE_RESULT_SUCCESS && pooled->unmap(p, kBytes) == ZE_RESULT_SUCCESS;
            };
            const auto cuda_pool_once = [&] {
                CUdeviceptr p = 0;
                return raw.cu.cuMemAllocFromPoolAsync(&p, kBytes, cuda_pool, raw.stream) == kCudaSuccess &&
                       raw.cu.cuMemFreeAsync(p, raw.stream) == kCudaSuccess;
            };
            const double pool_ns = ns_per_call(rounds, m, pool_once);
            rows.push_back(row("cuda", "pooled device mmap+munmap 1 MiB", pool_ns / 1e3, "us", theirs / 1e3,
                               "cuMemAlloc+cuMemFree", false));
            rows.push_back(row("cuda", "pooled device mmap+munmap 1 MiB", pool_ns / 1e3, "us",
                               ns_per_call(rounds, m, cuda_pool_once) / 1e3, "cuMemAllocFromPoolAsync+cuMemFreeAsync",
                               false));
            raw.cu.cuStreamSynchronize(raw.stream);
            const double area_ns = ns_per_call(rounds, n, [&] {
                void* p = nullptr;
                return plain->map(kBytes, &p) == ZE_RESULT_SUCCESS && plain->unmap(p) == ZE_RESULT_SUCCESS;
            });
            rows.push_back(row("cuda", "unpooled device area mmap+munmap 1 MiB", area_ns / 1e3, "us", theirs / 1e3,
                               "cuMemAlloc+cuMemFree", false));
        }
    }

    // Tracer overhead per kernel: empty kernels untraced, under CUPTI alone, and under
    // zehal's tracer with a thread draining it; the overhead is the extra time per kernel.
    hal::TraceSource* source = dev.trace_source();
    RawCupti cupti;
    if (source && cupti.load()) {
        uint32_t engine = ~0u;
        const auto& groups = dev.metric_groups();
        for (uint32_t i = 0; i < groups.size() && engine == ~0u; ++i)
            if ((groups[i].sampling_types & hal::kSamplingTracerBased) &&
                !(groups[i].type_flags & hal::kGroupExportDmaBuf))
                engine = i;
        const int kernels = options.quick ? 2000 : 20000;
        const int traced_rounds = options.quick ? 2 : 5;
        auto timed = [&]() -> double {
            const uint64_t t0 = host_now_ns();
            if (!raw.kernels(kernels)) return 0;
            return static_cast<double>(host_now_ns() - t0) / kernels;
        };
        const uint32_t started[] = {engine};
        // One round of each mode; round 0 warms up (CUPTI's first enable is slow) and is
        // not counted; the modes alternate so that drift of the machine hits all three.
        std::vector<double> plain_ns, alone_ns, ours_ns;
        for (int r = 0; r <= traced_rounds; ++r) {
            const double p = timed();
            double a = 0, o = 0;
            if (cupti.start()) {
                a = timed();
                cupti.stop();
            }
            if (engine != ~0u && source->start(started) == ZE_RESULT_SUCCESS) {
                std::atomic<bool> quit{false};
                std::thread drainer([&] {
                    std::vector<hal::TraceRecord> buf(4096);
                    uint64_t lost = 0;
                    // Relaxed: a stop flag; nothing else is published through it.
                    while (!quit.load(std::memory_order_relaxed))
                        if (source->drain(buf.data(), buf.size() * sizeof(hal::TraceRecord), &lost) == 0)
                            std::this_thread::sleep_for(std::chrono::microseconds(200));
                });
                o = timed();
                quit.store(true, std::memory_order_relaxed);
                drainer.join();
                source->stop();
            }
            if (r == 0) continue;
            plain_ns.push_back(p);
            if (a > 0) alone_ns.push_back(a);
            if (o > 0) ours_ns.push_back(o);
        }
        const double plain = best(plain_ns), alone = best(alone_ns), ours = best(ours_ns);
        if (alone > 0 && ours > 0) {
            // Per kernel: zehal's tracer beside CUPTI alone; the untraced row gives the
            // floor, so the tracer's overhead is the difference from it.
            rows.push_back(row("cuda", "empty kernel, traced (tracer overhead)", ours / 1e3, "us", alone / 1e3,
                               "same kernel under CUPTI activity alone", false));
            rows.push_back(row("cuda", "empty kernel, untraced", plain / 1e3, "us", 0, "", false));
        }
        // End to end: commands read from zehal's tracer per second beside the records CUPTI
        // alone completes per second, the same launches in the same process, alternating,
        // the best round of each. Both are bound by the launch rate: a ratio near 1 says
        // the tracer's path keeps up with CUPTI's own delivery.
        std::vector<double> cupti_rates, ours_rates;
        std::vector<metrics::MetricGroupRef> chosen;
        if (const auto tracer = open_tracer(device, {"EngineEvents"}, 64u << 20, &chosen)) {
            for (int r = 0; r < traced_rounds; ++r) {
                cupti_rates.push_back(cupti_records_per_s(raw, cupti, kernels));
                ours_rates.push_back(traced_commands_per_s(*tracer, chosen[0]->info().first_metric_id, raw, kernels));
            }
            tracer->destroy();
        }
        const double cupti_rate = best_rate(cupti_rates);
        const double traced_rate = best_rate(ours_rates);
        if (cupti_rate > 0 && traced_rate > 0)
            rows.push_back(row("cuda", "kernels back to back -> tracer reader, zero drops", traced_rate / 1e6,
                               "Mcommands/s", cupti_rate / 1e6, "CUPTI alone: activity records completed", true));
    }
    return rows;
}

}  // namespace zehal::bench
