// When CUDA's device printf output reaches the process: the driver copies a context's printf
// buffer to standard output only at certain calls (cuEventSynchronize, cuStreamSynchronize,
// module loads, context teardown), never when the host merely polls a flag as zehal's waits
// do. Each launch of a kernel that prints leaves a mark (a CUDA event recorded behind it);
// when a host wait or query sees work of the device complete, the marks already passed are
// synchronized, which returns at once and writes their output (docs/kernels.md).
#pragma once

#include <atomic>
#include <mutex>
#include <vector>

#include "hal/cuda/driver_api.hpp"

namespace zehal::cuda {

// The marks of one device's context. Thread-safe.
class PrintfFlush {
public:
    // Marks `stream`'s newest work (a launch of a kernel that prints); the context is current.
    CUresult mark(const DriverApi& api, CUstream stream);
    // Writes the output of every marked launch that has completed (makes `ctx` current for
    // it). Cheap when nothing is marked.
    void flush(const DriverApi& api, CUcontext ctx) noexcept;
    // Releases the marks left (the context is current); their output comes with the
    // context's teardown.
    void release(const DriverApi& api) noexcept;

private:
    // Synchronizes and destroys the marks that have completed. Caller holds mu_, context current.
    void reap_locked(const DriverApi& api) noexcept;

    // Marks beyond which mark() first reaps the completed ones.
    static constexpr size_t kReapAt = 64;

    std::mutex mu_;
    std::vector<CUevent> marks_;      // guarded by mu_
    std::atomic<size_t> pending_{0};  // marks_.size(), read without mu_
};

}  // namespace zehal::cuda
