// CUPTI's activity API is process-wide: one hub (CuptiHub) enables it while any device's
// trace source runs and hands each record to the sink (CuptiSink) of its device.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "zehal/ze_result.h"
#include "common/clock.hpp"

#ifdef ZEHAL_HAVE_CUPTI_H
#include "hal/cuda/cupti_api.hpp"
#endif

namespace zehal::cuda {

// One GPU command as CUPTI reports it, timestamps in host ns (CLOCK_MONOTONIC_RAW).
struct CuptiActivity {
    uint64_t start_ns;
    uint64_t end_ns;
    uint64_t bytes;
    uint32_t ordinal;  // engine group: 0 compute (kernels), 1 copy (memcpy, memset)
    uint32_t engine;   // the CUDA channel
    uint64_t stream;
    uint32_t type;         // kCuptiCopy, kCuptiFill or kCuptiKernel
    uint64_t correlation;  // CUPTI's correlation id
};

// Command types of CuptiActivity::type (the CommandType metric: the sim's 0-2, plus kernels).
enum CuptiCommand : uint32_t { kCuptiCopy = 0, kCuptiFill = 1, kCuptiKernel = 3 };

// What receives a device's records: its trace source. Called from CUPTI's threads.
class CuptiSink {
public:
    // A command of the sink's device.
    virtual void on_activity(const CuptiActivity& activity) = 0;
    // Records CUPTI dropped (its buffers were full).
    virtual void on_cupti_dropped(size_t records) = 0;

protected:
    ~CuptiSink() = default;
};

#ifdef ZEHAL_HAVE_CUPTI_H
// CUPTI's activity API is process-wide: one hub enables it while any device's trace
// source runs and hands each record to the source of its device.
class CuptiHub {
public:
    static CuptiHub& instance(const CuptiApi& api) {
        // Never destroyed: CUPTI may call back while the process exits. Published for the
        // callbacks (plain functions) before anything can enable CUPTI through it.
        static CuptiHub* const hub = [&] {
            auto* made = new CuptiHub(api);
            current_.store(made, std::memory_order_release);
            return made;
        }();
        return *hub;
    }
    void attach(int ordinal, CuptiSink* sink) {
        std::lock_guard lock(dispatch_mu_);
        if (sources_.size() <= static_cast<size_t>(ordinal)) sources_.resize(static_cast<size_t>(ordinal) + 1);
        sources_[static_cast<size_t>(ordinal)] = sink;
    }
    void detach(int ordinal) {
        std::lock_guard lock(dispatch_mu_);
        sources_[static_cast<size_t>(ordinal)] = nullptr;
    }
    // Enables the activity kinds for one more user.
    ze_result_t start();
    // Flushes what CUPTI holds, then disables the kinds when the last user stops.
    void stop();
    // Hands every completed record over now (CUPTI's default flush).
    void flush() { api_.cuptiActivityFlushAll(0); }

private:
    explicit CuptiHub(const CuptiApi& api) : api_(api) {}
    static constexpr CUpti_ActivityKind kKinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                                    CUPTI_ACTIVITY_KIND_MEMSET};
    static constexpr size_t kCuptiBufferBytes = 1u << 20;

    static void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records);
    static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t* buffer, size_t size, size_t valid);
    static uint64_t CUPTIAPI timestamp() { return host_now_ns(); }
    void dispatch(CUcontext ctx, uint8_t* buffer, size_t valid);

    // The hub, for CUPTI's callbacks (acquire in buffer_completed pairs with the release in
    // instance()).
    static inline std::atomic<CuptiHub*> current_{nullptr};

    const CuptiApi& api_;
    std::mutex control_mu_;  // users_ and enabling
    int users_ = 0;
    std::mutex dispatch_mu_;  // sources_; held while records are handed over
    std::vector<CuptiSink*> sources_;
};
#endif

}  // namespace zehal::cuda
