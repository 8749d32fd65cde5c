// The GPU's global timer (%globaltimer, 1 ns ticks, 64 valid bits) mapped to host time
// (CLOCK_MONOTONIC_RAW ns): an offset and a drift fitted from batches of real reads.
#pragma once

#include <cstdint>
#include <deque>
#include <mutex>
#include <span>

#include "hal/cuda/device_kernels.hpp"
#include "hal/cuda/driver_api.hpp"

namespace zehal::cuda {

// Each batch launches the timer kernel several times, each between two host clock reads
// (the host polls the flag the kernel sets, as it does for events); the device read lies
// inside every [before, after] window, so the offset lies in
// the intersection of the windows, whose middle is the estimate. Batches taken over time
// give the drift (least squares). The fit is refreshed when older than kRefreshNs.
class DeviceClock {
public:
    // How old the newest batch may be before a conversion takes a new one.
    static constexpr uint64_t kRefreshNs = 1'000'000'000;

    // Creates the sampling stream and pinned slot in `ctx` (current); no batch yet.
    CUresult init(const DriverApi& api, CUcontext ctx, const DeviceKernels* kernels);
    // Releases them (context current).
    void shutdown();

    // Host ns now and the device ticks of that instant.
    ze_result_t now(uint64_t* host_ns, uint64_t* ticks);
    // Host ns of device tick `ticks`.
    ze_result_t to_host(uint64_t ticks, uint64_t* host_ns);
    // Device ticks of host instant `host_ns`.
    ze_result_t to_ticks(uint64_t host_ns, uint64_t* ticks);
    // Host instants to device ticks in place, from the current fit, never sampling (for
    // callers that must not launch work, such as CUPTI's callbacks); false before the
    // first batch.
    bool to_ticks_fitted(std::span<uint64_t> instants);

private:
    // One batch's result: ticks − host ns at host instant `host_ns`.
    struct Point {
        uint64_t host_ns;
        int64_t offset;
    };
    // Takes a batch when there is none, or when the newest is stale and no other caller
    // is taking one (then the current fit serves). `lock` holds mu_; it is released while
    // a refresh batch runs.
    ze_result_t refresh(std::unique_lock<std::mutex>& lock);
    // Takes one batch. Caller holds batch_mu_, or mu_ while there is no point yet.
    ze_result_t sample_batch(Point* out);
    // Adds a batch's point and refits the drift. Caller holds mu_.
    void add_point_locked(const Point& point);
    // offset at host instant `host_ns` from the fit. Caller holds mu_.
    long double offset_at_locked(uint64_t host_ns) const;

    const DriverApi* api_ = nullptr;
    CUcontext ctx_ = nullptr;
    const DeviceKernels* kernels_ = nullptr;
    // Where the sampling kernel writes: pinned, mapped host memory.
    struct Slot {
        uint64_t ticks;
        uint32_t flag;
    };
    CUstream stream_ = nullptr;
    Slot* slot_ = nullptr;

    std::mutex batch_mu_;  // a refresh batch (the stream and slot): try-locked under mu_, held alone
    std::mutex mu_;
    std::deque<Point> points_;  // oldest first, at most kMaxPoints
    long double drift_ = 0;     // d(offset)/d(host ns)
};

}  // namespace zehal::cuda
