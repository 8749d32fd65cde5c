#include "hal/cuda/device_clock.hpp"

#include <algorithm>
#include <atomic>

#include "common/clock.hpp"
#include "common/wait_word.hpp"

namespace zehal::cuda {

namespace {
// Reads per batch, batches kept for the drift fit, and the shortest span the fit needs.
constexpr int kSamplesPerBatch = 16;
constexpr size_t kMaxPoints = 32;
constexpr uint64_t kMinDriftSpanNs = 100'000'000;
}  // namespace

CUresult DeviceClock::init(const DriverApi& api, CUcontext ctx, const DeviceKernels* kernels) {
    api_ = &api;
    ctx_ = ctx;
    kernels_ = kernels;
    CUresult r = api.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING);
    if (r != CUDA_SUCCESS) {
        stream_ = nullptr;
        return r;
    }
    void* slot = nullptr;
    r = api.cuMemHostAlloc(&slot, sizeof(Slot), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != CUDA_SUCCESS) {
        shutdown();
        return r;
    }
    slot_ = static_cast<Slot*>(slot);
    return CUDA_SUCCESS;
}

void DeviceClock::shutdown() {
    if (stream_) api_->cuStreamDestroy(stream_);
    if (slot_) api_->cuMemFreeHost(slot_);
    stream_ = nullptr;
    slot_ = nullptr;
}

ze_result_t DeviceClock::sample_batch(Point* out) {
    ContextScope scope(*api_, ctx_);
    int64_t lo = INT64_MIN;  // largest ticks − after
    int64_t hi = INT64_MAX;  // smallest ticks − before
    uint64_t best_window = ~0ull;
    Point best{};
    std::atomic_ref<uint32_t> flag(slot_->flag);
    for (int i = 0; i < kSamplesPerBatch; ++i) {
        // Relaxed: only the device writes the flag next, after this store is long done.
        flag.store(0, std::memory_order_relaxed);
        const uint64_t before = host_now_ns();
        // The same path as a timestamp event's end: the kernel reads the timer, fences,
        // sets the flag, and the host polls the flag; so the estimate's error is the
        // same on both sides of every command.
        if (CUresult r = kernels_->timestamp_signal(*api_, stream_, &slot_->ticks, &slot_->flag, 1); r != CUDA_SUCCESS)
            return to_ze_result(r);
        // Acquire: the ticks written before the flag are visible once the flag is.
        for (uint32_t spins = 1; flag.load(std::memory_order_acquire) == 0; ++spins) {
            cpu_relax();
            if (spins % 4096 == 0) {
                const CUresult r = api_->cuStreamQuery(stream_);
                if (r != CUDA_ERROR_NOT_READY && flag.load(std::memory_order_acquire) == 0)
                    return r == CUDA_SUCCESS ? ZE_RESULT_ERROR_UNKNOWN : to_ze_result(r);
            }
        }
        const uint64_t after = host_now_ns();
        const auto ticks = static_cast<int64_t>(*const_cast<volatile uint64_t*>(&slot_->ticks));
        lo = std::max(lo, ticks - static_cast<int64_t>(after));
        hi = std::min(hi, ticks - static_cast<int64_t>(before));
        if (after - before < best_window) {
            best_window = after - before;
            best = {before + (after - before) / 2, ticks - static_cast<int64_t>(before + (after - before) / 2)};
        }
    }
    // Windows that do not intersect mean the clocks moved apart inside the batch: keep the
    // narrowest window's middle instead.
    if (lo <= hi) best.offset = lo + (hi - lo) / 2;
    *out = best;
    return ZE_RESULT_SUCCESS;
}

void DeviceClock::add_point_locked(const Point& point) {
    points_.push_back(point);
    if (points_.size() > kMaxPoints) points_.pop_front();
    // Least-squares slope of offset over host time, once the points span long enough.
    drift_ = 0;
    if (points_.size() >= 2 && points_.back().host_ns - points_.front().host_ns >= kMinDriftSpanNs) {
        const long double n = static_cast<long double>(points_.size());
        long double mx = 0, my = 0;
        for (const Point& p : points_) {
            mx += static_cast<long double>(p.host_ns - points_.front().host_ns);
            my += static_cast<long double>(p.offset - points_.front().offset);
        }
        mx /= n;
        my /= n;
        long double sxy = 0, sxx = 0;
        for (const Point& p : points_) {
            const long double dx = static_cast<long double>(p.host_ns - points_.front().host_ns) - mx;
            const long double dy = static_cast<long double>(p.offset - points_.front().offset) - my;
            sxy += dx * dy;
            sxx += dx * dx;
        }
        if (sxx > 0) drift_ = sxy / sxx;
    }
}

ze_result_t DeviceClock::refresh(std::unique_lock<std::mutex>& lock) {
    if (!points_.empty() && host_now_ns() - points_.back().host_ns < kRefreshNs) return ZE_RESULT_SUCCESS;
    Point point;
    if (points_.empty()) {
        // The first batch, under mu_: every caller needs it. No refresh batch can run yet
        // (one runs only once a point exists).
        if (ze_result_t r = sample_batch(&point); r != ZE_RESULT_SUCCESS) return r;
        add_point_locked(point);
        return ZE_RESULT_SUCCESS;
    }
    // A stale fit: one caller takes a batch without holding mu_ (its kernel may wait long
    // behind a busy GPU), the others convert with the fit they have meanwhile.
    std::unique_lock batch(batch_mu_, std::try_to_lock);
    if (!batch) return ZE_RESULT_SUCCESS;
    lock.unlock();
    const ze_result_t r = sample_batch(&point);
    lock.lock();
    if (r == ZE_RESULT_SUCCESS) add_point_locked(point);
    return r;
}

long double DeviceClock::offset_at_locked(uint64_t host_ns) const {
    const Point& p = points_.back();
    const long double dt = static_cast<long double>(host_ns) - static_cast<long double>(p.host_ns);
    return static_cast<long double>(p.offset) + drift_ * dt;
}

ze_result_t DeviceClock::now(uint64_t* host_ns, uint64_t* ticks) {
    std::unique_lock lock(mu_);
    if (ze_result_t r = refresh(lock); r != ZE_RESULT_SUCCESS) return r;
    const uint64_t h = host_now_ns();
    *host_ns = h;
    *ticks = static_cast<uint64_t>(static_cast<long double>(h) + offset_at_locked(h));
    return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceClock::to_ticks(uint64_t host_ns, uint64_t* ticks) {
    std::unique_lock lock(mu_);
    if (ze_result_t r = refresh(lock); r != ZE_RESULT_SUCCESS) return r;
    *ticks = static_cast<uint64_t>(static_cast<long double>(host_ns) + offset_at_locked(host_ns));
    return ZE_RESULT_SUCCESS;
}

bool DeviceClock::to_ticks_fitted(std::span<uint64_t> instants) {
    std::lock_guard lock(mu_);
    if (points_.empty()) return false;
    for (uint64_t& t : instants) t = static_cast<uint64_t>(static_cast<long double>(t) + offset_at_locked(t));
    return true;
}

ze_result_t DeviceClock::to_host(uint64_t ticks, uint64_t* host_ns) {
    std::unique_lock lock(mu_);
    if (ze_result_t r = refresh(lock); r != ZE_RESULT_SUCCESS) return r;
    // host = ticks − offset(host): one fixed-point step is exact to well under a ns, the
    // drift being a few parts per million.
    const long double t = static_cast<long double>(ticks);
    const long double guess = t - static_cast<long double>(points_.back().offset);
    const long double h = t - offset_at_locked(static_cast<uint64_t>(guess));
    *host_ns = h <= 0 ? 0 : static_cast<uint64_t>(h);
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::cuda
