// Copies between two devices (docs/devices.md): device memory of A to device memory of B on
// A's copy engine, and both directions at once (A to B on A's engine, B to A on B's), 4 KiB,
// 1 MiB and max_bytes, beside the baseline in the same run: cuMemcpyPeerAsync on raw streams
// of the two primary contexts for CUDA devices, memcpy (one thread per direction) elsewhere.
// For CUDA devices also the host's time to submit a 4 KiB copy, beside the driver's.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <utility>

#include "benchmarks.hpp"
#include "paired_rounds.hpp"
#include "raw_cuda.hpp"

namespace zehal::bench {

namespace {

// The baseline's driver entry points, and the primary context and a stream of each device.
class RawPeers {
public:
    // False when the driver or either device cannot be had.
    bool open(const hal::DeviceProperties& a, const hal::DeviceProperties& b) {
        if (!cu_.load()) return false;
        return side(a, &sides_[0]) && side(b, &sides_[1]) && enable(0, 1) && enable(1, 0);
    }
    ~RawPeers() {
        for (Side& s : sides_) {
            if (!s.ctx) continue;
            cu_.cuCtxPushCurrent(s.ctx);
            if (s.stream) cu_.cuStreamDestroy(s.stream);
            CUcontext popped = nullptr;
            cu_.cuCtxPopCurrent(&popped);
            cu_.cuDevicePrimaryCtxRelease(s.dev);
        }
    }
    // Copies `n` bytes from `src` (device `from`) to `dst` (device 1 - from) on `from`'s stream.
    bool copy(int from, void* dst, const void* src, size_t n) {
        const Side& s = sides_[from];
        const Side& d = sides_[1 - from];
        return cu_.cuMemcpyPeerAsync(reinterpret_cast<CUdeviceptr>(dst), d.ctx, reinterpret_cast<CUdeviceptr>(src),
                                     s.ctx, n, s.stream) == kCudaSuccess;
    }
    bool wait(int side) { return cu_.cuStreamSynchronize(sides_[side].stream) == kCudaSuccess; }

private:
    struct Side {
        CUdevice dev = 0;
        CUcontext ctx = nullptr;
        CUstream stream = nullptr;
    };

    // The device whose uuid is `props`'s, its primary context and a stream on it.
    bool side(const hal::DeviceProperties& props, Side* out) {
        if (!find_cuda_device(cu_, props.uuid, &out->dev)) return false;
        if (cu_.cuDevicePrimaryCtxRetain(&out->ctx, out->dev) != kCudaSuccess) {
            out->ctx = nullptr;
            return false;
        }
        cu_.cuCtxPushCurrent(out->ctx);
        const bool ok = cu_.cuStreamCreate(&out->stream, kStreamNonBlocking) == kCudaSuccess;
        CUcontext popped = nullptr;
        cu_.cuCtxPopCurrent(&popped);
        return ok;
    }
    // Peer access from `from`'s context to `to`'s memory, as zehal enables it. Its result is
    // not needed: without peer access the driver stages the copies, for both sides alike.
    bool enable(int from, int to) {
        cu_.cuCtxPushCurrent(sides_[from].ctx);
        cu_.cuCtxEnablePeerAccess(sides_[to].ctx, 0);
        CUcontext popped = nullptr;
        cu_.cuCtxPopCurrent(&popped);
        return true;
    }

    RawCuda cu_;
    Side sides_[2];
};

// `n` bytes of device memory of `d`, freed when it goes.
class DeviceBuffer {
public:
    DeviceBuffer(const hal::DeviceRef& d, size_t n) : d_(d) {
        if (d_->allocate(hal::MemoryKind::device, n, 0, 0, 0, &p_) != ZE_RESULT_SUCCESS) p_ = nullptr;
    }
    ~DeviceBuffer() {
        if (p_) d_->free(p_);
    }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    void* get() const { return p_; }

private:
    hal::DeviceRef d_;
    void* p_ = nullptr;
};

// The best bytes per second of zehal's `run` and of the baseline `base` (each run moving
// `bytes`), over `rounds` rounds of `iters` runs whose order alternates (paired_rounds), so
// that neither side always runs first; 0 for a side that failed or, for an empty `base`, is
// absent. The first run of each is a warm-up (and first-use set-up, such as peer access).
std::pair<double, double> best_rates(const std::function<bool()>& run, const std::function<bool()>& base, size_t bytes,
                                     int rounds, int iters) {
    bool run_ok = true, base_ok = static_cast<bool>(base);
    const PairedTimes t = paired_rounds([&] { run_ok = run_ok && run(); }, [&] { base_ok = base_ok && base(); }, rounds,
                                        iters);
    const auto rate = [bytes](bool ok, double seconds) { return ok ? static_cast<double>(bytes) / seconds : 0; };
    return {rate(run_ok, t.a), rate(base_ok, t.b)};
}

// The best seconds per submission of `submit` and of `base`, each issued in batches of 64
// with `wait` (untimed) after each batch, over `rounds` rounds of 20 batches whose order
// alternates: what a copy costs the host before its stream runs it.
std::pair<double, double> best_submissions(const std::function<bool()>& submit, const std::function<bool()>& base,
                                           const std::function<bool()>& wait, int rounds) {
    constexpr int kBatch = 64;
    bool ok = true;
    const auto batches = [&](const std::function<bool()>& f) {
        double best = 1e30;
        for (int b = 0; b < 20; ++b) {
            const auto t0 = std::chrono::steady_clock::now();
            for (int i = 0; i < kBatch; ++i) ok = f() && ok;
            best = std::min(best,
                            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / kBatch);
            ok = wait() && ok;
        }
        return best;
    };
    double ours = 1e30, theirs = 1e30;
    for (int r = 0; r < rounds; ++r) {
        if (r % 2 == 0) {
            ours = std::min(ours, batches(submit));
            theirs = std::min(theirs, batches(base));
        } else {
            theirs = std::min(theirs, batches(base));
            ours = std::min(ours, batches(submit));
        }
    }
    return ok ? std::pair{ours, theirs} : std::pair{0.0, 0.0};
}

// A queue on the first copy engine of `d` (the compute engine when it has none).
std::shared_ptr<hal::Queue> copy_queue(const hal::DeviceRef& d) {
    std::shared_ptr<hal::Queue> q;
    const uint32_t ordinal = d->properties().copy_engines ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    if (d->create_queue(ordinal, 0, &q) != ZE_RESULT_SUCCESS) return nullptr;
    return q;
}

// A thread that runs one job each time it is asked, so that a baseline copying in two
// directions at once pays no thread start per round.
class Helper {
public:
    Helper() : thread_([this] { loop(); }) {}
    ~Helper() {
        stop_.store(true, std::memory_order_release);
        // Release: the loop sees stop_ with the bumped word.
        asked_.fetch_add(1, std::memory_order_release);
        asked_.notify_one();
        thread_.join();
    }
    Helper(const Helper&) = delete;
    Helper& operator=(const Helper&) = delete;
    // Starts `job` on the helper thread; wait() returns once it ran.
    void start(std::function<void()> job) {
        job_ = std::move(job);
        // Release: the helper's acquire of asked_ sees job_.
        asked_.fetch_add(1, std::memory_order_release);
        asked_.notify_one();
    }
    void wait() {
        // Acquire: the job's writes happen before the return.
        const uint32_t target = asked_.load(std::memory_order_relaxed);
        for (uint32_t d = done_.load(std::memory_order_acquire); d != target; d = done_.load(std::memory_order_acquire))
            done_.wait(d, std::memory_order_acquire);
    }

private:
    void loop() {
        uint32_t seen = 0;
        for (;;) {
            asked_.wait(seen, std::memory_order_acquire);  // acquire: pairs with start()'s release
            seen = asked_.load(std::memory_order_acquire);
            if (stop_.load(std::memory_order_acquire)) return;
            job_();
            // Release: wait()'s acquire sees what the job wrote.
            done_.store(seen, std::memory_order_release);
            done_.notify_one();
        }
    }

    std::function<void()> job_;
    std::atomic<uint32_t> asked_{0};
    std::atomic<uint32_t> done_{0};
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

std::string size_name(size_t n) {
    if (n >= (1u << 20)) return std::to_string(n >> 20) + " MiB";
    return std::to_string(n >> 10) + " KiB";
}

}  // namespace

std::vector<Row> peer_copy(const hal::DeviceRef& a, const hal::DeviceRef& b, const Options& options) {
    std::vector<Row> rows;
    if (!a || !b || a == b) return rows;
    const bool cuda = a->backend_name() == "cuda" && b->backend_name() == "cuda";
    RawPeers raw;
    const bool have_raw = cuda && raw.open(a->properties(), b->properties());
    auto qa = copy_queue(a);
    auto qb = copy_queue(b);
    if (!qa || !qb) return rows;
    const int rounds = options.quick ? 1 : 5;
    Helper other;  // the memcpy baseline's second direction
    for (size_t n : {size_t{4} << 10, size_t{1} << 20, options.max_bytes}) {
        if (n > options.max_bytes) continue;
        DeviceBuffer on_a(a, n), on_a2(a, n), on_b(b, n), on_b2(b, n);
        if (!on_a.get() || !on_a2.get() || !on_b.get() || !on_b2.get()) break;
        const int iters = options.quick ? 2 : static_cast<int>(std::clamp<size_t>((1u << 30) / n, 4, 2000));
        // One direction: A's memory to B's, on A's engine.
        const auto one_zehal = [&] {
            return qa->append_copy(on_b.get(), on_a.get(), n, nullptr, {}) == ZE_RESULT_SUCCESS &&
                   qa->host_synchronize(UINT64_MAX) == ZE_RESULT_SUCCESS;
        };
        // Both at once: A to B on A's engine, B to A on B's.
        const auto both_zehal = [&] {
            return qa->append_copy(on_b.get(), on_a.get(), n, nullptr, {}) == ZE_RESULT_SUCCESS &&
                   qb->append_copy(on_a2.get(), on_b2.get(), n, nullptr, {}) == ZE_RESULT_SUCCESS &&
                   qa->host_synchronize(UINT64_MAX) == ZE_RESULT_SUCCESS &&
                   qb->host_synchronize(UINT64_MAX) == ZE_RESULT_SUCCESS;
        };
        std::function<bool()> one_raw, both_raw;
        std::string base_name;
        if (have_raw) {
            base_name = "cuMemcpyPeerAsync";
            one_raw = [&] { return raw.copy(0, on_b.get(), on_a.get(), n) && raw.wait(0); };
            both_raw = [&] {
                return raw.copy(0, on_b.get(), on_a.get(), n) && raw.copy(1, on_a2.get(), on_b2.get(), n) &&
                       raw.wait(0) && raw.wait(1);
            };
        } else if (!cuda) {
            // Sim memory is host pages: the baseline is the CPU's copy, one thread per direction.
            base_name = "memcpy";
            one_raw = [&] {
                std::memcpy(on_b.get(), on_a.get(), n);
                return true;
            };
            both_raw = [&] {
                other.start([&] { std::memcpy(on_a2.get(), on_b2.get(), n); });
                std::memcpy(on_b.get(), on_a.get(), n);
                other.wait();
                return true;
            };
        }
        const auto [one, one_base] = best_rates(one_zehal, one_raw, n, rounds, iters);
        const auto [both, both_base] = best_rates(both_zehal, both_raw, 2 * n, rounds, iters);
        auto row = [&](const std::string& name, double value, double base) {
            Row r{"peer",    name + " " + size_name(n),   value / 1e9, "GB/s", base / 1e9,
                  base_name, base > 0 ? value / base : 0, ""};
            if (!cuda && n <= (4u << 10)) r.note = "a queue round trip per copy beside a plain memcpy";
            rows.push_back(r);
        };
        row("A->B", one, one_base);
        row("A<->B", both, both_base);
        if (have_raw && n <= (4u << 10)) {
            // The host's part alone: zehal's checks beside the driver's own submission.
            const auto [ours, theirs] = best_submissions(
                [&] { return qa->append_copy(on_b.get(), on_a.get(), n, nullptr, {}) == ZE_RESULT_SUCCESS; },
                [&] { return raw.copy(0, on_b.get(), on_a.get(), n); },
                [&] { return qa->host_synchronize(UINT64_MAX) == ZE_RESULT_SUCCESS && raw.wait(0); }, rounds);
            rows.push_back(Row{"peer", "A->B " + size_name(n) + " submission", ours * 1e6, "us", theirs * 1e6,
                               base_name, ours > 0 ? theirs / ours : 0, ""});
        }
    }
    return rows;
}

}  // namespace zehal::bench
