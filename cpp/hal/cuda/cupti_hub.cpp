#include "hal/cuda/cupti_hub.hpp"

#include <new>
#include <string_view>

#include "common/clock.hpp"

namespace zehal::cuda {

ze_result_t CuptiHub::start() {
    std::lock_guard lock(control_mu_);
    if (users_++ > 0) return ZE_RESULT_SUCCESS;
    // Timestamps in CLOCK_MONOTONIC_RAW ns, registered before any kind is enabled; the
    // callbacks again on every start, since another CUPTI user may have replaced them.
    api_.cuptiActivityRegisterTimestampCallback(&CuptiHub::timestamp);
    CUptiResult r = api_.cuptiActivityRegisterCallbacks(&CuptiHub::buffer_requested, &CuptiHub::buffer_completed);
    for (size_t i = 0; r == CUPTI_SUCCESS && i < std::size(kKinds); ++i) r = api_.cuptiActivityEnable(kKinds[i]);
    if (r != CUPTI_SUCCESS) {
        for (CUpti_ActivityKind k : kKinds) api_.cuptiActivityDisable(k);
        --users_;
        return r == CUPTI_ERROR_NOT_INITIALIZED || r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
                   ? ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE
                   : ZE_RESULT_ERROR_UNKNOWN;
    }
    return ZE_RESULT_SUCCESS;
}

void CuptiHub::stop() {
    std::lock_guard lock(control_mu_);
    api_.cuptiActivityFlushAll(0);
    if (--users_ > 0) return;
    for (CUpti_ActivityKind k : kKinds) api_.cuptiActivityDisable(k);
    api_.cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

void CUPTIAPI CuptiHub::buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
    // CUPTI wants 8-byte alignment; new[] of a large block gives at least 16.
    *buffer = new (std::nothrow) uint8_t[kCuptiBufferBytes];
    *size = *buffer ? kCuptiBufferBytes : 0;
    *max_records = 0;
}

void CUPTIAPI CuptiHub::buffer_completed(CUcontext ctx, uint32_t, uint8_t* buffer, size_t, size_t valid) {
    // Acquire: pairs with the release in instance().
    if (CuptiHub* hub = current_.load(std::memory_order_acquire); hub && buffer) hub->dispatch(ctx, buffer, valid);
    delete[] buffer;
}

void CuptiHub::dispatch(CUcontext ctx, uint8_t* buffer, size_t valid) {
    std::lock_guard lock(dispatch_mu_);
    auto source = [&](uint32_t device) -> CuptiSink* { return device < sources_.size() ? sources_[device] : nullptr; };
    CUpti_Activity* rec = nullptr;
    while (api_.cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
            case CUPTI_ACTIVITY_KIND_KERNEL:
            case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
                const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
                // zehal's own timestamp and probe kernels are not the user's commands.
                if (k->name && std::string_view(k->name).starts_with("zehal_")) break;
                if (CuptiSink* t = source(k->deviceId))
                    t->on_activity({k->start, k->end, 0, 0, k->channelID, k->streamId, kCuptiKernel, k->correlationId});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMCPY: {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemcpy6*>(rec);
                if (CuptiSink* t = source(m->deviceId))
                    t->on_activity(
                        {m->start, m->end, m->bytes, 1, m->channelID, m->streamId, kCuptiCopy, m->correlationId});
                break;
            }
            case CUPTI_ACTIVITY_KIND_MEMSET: {
                const auto* m = reinterpret_cast<const CUpti_ActivityMemset4*>(rec);
                if (CuptiSink* t = source(m->deviceId))
                    t->on_activity(
                        {m->start, m->end, m->bytes, 1, m->channelID, m->streamId, kCuptiFill, m->correlationId});
                break;
            }
            default:
                break;
        }
    }
    size_t dropped = 0;
    if (api_.cuptiActivityGetNumDroppedRecords(ctx, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
        for (CuptiSink* t : sources_)
            if (t) t->on_cupti_dropped(dropped);
    }
}

}  // namespace zehal::cuda
