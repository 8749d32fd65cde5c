#include "hal/cuda/printf_flush.hpp"

#include <algorithm>
#include <new>

namespace zehal::cuda {

CUresult PrintfFlush::mark(const DriverApi& api, CUstream stream) {
    CUevent e = nullptr;
    if (CUresult r = api.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING); r != CUDA_SUCCESS) return r;
    if (CUresult r = api.cuEventRecord(e, stream); r != CUDA_SUCCESS) {
        api.cuEventDestroy(e);
        return r;
    }
    std::lock_guard lock(mu_);
    if (marks_.size() >= kReapAt) reap_locked(api);
    try {
        marks_.push_back(e);
    } catch (const std::bad_alloc&) {
        api.cuEventDestroy(e);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    // Relaxed: a hint for flush(), which reads marks_ under mu_.
    pending_.store(marks_.size(), std::memory_order_relaxed);
    return CUDA_SUCCESS;
}

void PrintfFlush::flush(const DriverApi& api, CUcontext ctx) noexcept {
    // Relaxed: a mark made concurrently with this wait belongs to work the wait is not about.
    if (pending_.load(std::memory_order_relaxed) == 0) return;
    ContextScope scope(api, ctx);
    std::lock_guard lock(mu_);
    reap_locked(api);
}

void PrintfFlush::release(const DriverApi& api) noexcept {
    std::lock_guard lock(mu_);
    for (CUevent e : marks_) api.cuEventDestroy(e);
    marks_.clear();
    pending_.store(0, std::memory_order_relaxed);
}

void PrintfFlush::reap_locked(const DriverApi& api) noexcept {
    std::erase_if(marks_, [&api](CUevent e) {
        if (api.cuEventQuery(e) != CUDA_SUCCESS) return false;
        // Completed: returns at once, and the driver writes the printf buffer.
        api.cuEventSynchronize(e);
        api.cuEventDestroy(e);
        return true;
    });
    pending_.store(marks_.size(), std::memory_order_relaxed);
}

}  // namespace zehal::cuda
