#include "hal/cuda/cuda_event.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "common/clock.hpp"
#include "hal/timestamps.hpp"

namespace zehal::cuda {

namespace {
// The flag as an atomic: the host's accesses are atomic, the device's are DMA writes
// ordered by a system-wide fence before them.
std::atomic_ref<uint32_t> flag_of(EventSlot* slot) noexcept { return std::atomic_ref<uint32_t>(slot->flag); }
}  // namespace

ze_result_t CudaEventPool::create(const std::shared_ptr<CudaDevice>& device, uint32_t count, uint32_t flags,
                                  std::shared_ptr<hal::EventPool>* out) {
    if (count > kMaxEvents) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (ze_result_t r = device->ready(); r != ZE_RESULT_SUCCESS) return r;
    std::shared_ptr<CudaEventPool> pool;
    try {
        pool = std::make_shared<CudaEventPool>(device, count, flags);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    const DriverApi& api = device->api();
    ContextScope scope(api, device->context());
    void* slots = nullptr;
    CUresult r = api.cuMemHostAlloc(&slots, sizeof(EventSlot) * count,
                                    CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (r != CUDA_SUCCESS) return r == CUDA_ERROR_OUT_OF_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : device->check(r);
    std::memset(slots, 0, sizeof(EventSlot) * count);
    CUdeviceptr device_slots = 0;
    if (r = api.cuMemHostGetDevicePointer(&device_slots, slots, 0); r != CUDA_SUCCESS) {
        api.cuMemFreeHost(slots);
        return device->check(r);
    }
    pool->slots_ = static_cast<EventSlot*>(slots);
    for (uint32_t i = 0; i < count; ++i) {
        CudaEvent& e = pool->events_[i];
        e.pool_ = pool.get();
        e.slot_ = &pool->slots_[i];
        e.device_slot_ = device_slots + i * sizeof(EventSlot);
    }
    *out = std::move(pool);
    return ZE_RESULT_SUCCESS;
}

CudaEventPool::CudaEventPool(std::shared_ptr<CudaDevice> device, uint32_t count, uint32_t flags)
    : device_(std::move(device)),
      count_(count),
      flags_(flags),
      events_(new CudaEvent[count]) {}

CudaEventPool::~CudaEventPool() {
    // A stream still waiting on an event of this pool would wait forever on freed memory:
    // release every waiter first (destroying a pool in use is the caller's error; this
    // keeps it from hanging the device). Release: the flags are set before the free.
    for (uint32_t i = 0; slots_ && i < count_; ++i)
        flag_of(&slots_[i]).store(kSignalledByHost, std::memory_order_release);
    // cuMemFreeHost waits for the device's work, so no command still writes a slot.
    if (slots_) {
        ContextScope scope(device_->api(), device_->context());
        device_->api().cuMemFreeHost(slots_);
    }
}

ze_result_t CudaEventPool::event(uint32_t index, hal::EventRef* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (index >= count_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // Aliasing constructor: the event shares ownership of its pool.
    *out = hal::EventRef(shared_from_this(), &events_[index]);
    return ZE_RESULT_SUCCESS;
}

CudaDevice& CudaEvent::device() const noexcept { return pool_->device(); }

bool CudaEvent::records_timestamps() const noexcept {
    return (pool_->flags_ & (hal::kPoolKernelTimestamp | hal::kPoolKernelMappedTimestamp)) != 0;
}

uint32_t CudaEvent::flag() const noexcept { return flag_of(slot_).load(std::memory_order_acquire); }

hal::EventPool& CudaEvent::pool() { return *pool_; }

ze_result_t CudaEvent::query() {
    if (device().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (flag() == 0) return ZE_RESULT_NOT_READY;
    note_observed();
    return ZE_RESULT_SUCCESS;
}

void CudaEvent::note_submission(uint64_t host_ns, CudaDevice* writer) noexcept {
    slot_->submitted_ns = host_ns;
    // Relaxed: read only by a query of the timestamps, after the flag's acquire.
    observed_ns_.store(0, std::memory_order_relaxed);
    // Relaxed: as observed_ns_.
    writer_.store(writer, std::memory_order_relaxed);
}

void CudaEvent::note_observed() noexcept {
    // Relaxed: see note_submission; the first observer wins, and a later wait or query (a
    // polling loop) reads no clock.
    uint64_t none = 0;
    if (observed_ns_.load(std::memory_order_relaxed) == 0)
        observed_ns_.compare_exchange_strong(none, host_now_ns(), std::memory_order_relaxed);
    device().flush_printf();
}

void CudaEvent::bound_to_host_view(hal::KernelTimestampResult* ns) const noexcept {
    const auto move = [ns](int64_t by) {
        ns->global_start += by;
        ns->global_end += by;
        ns->context_start += by;
        ns->context_end += by;
    };
    const uint64_t submitted = slot_->submitted_ns;
    // The start timer ran after the submission: a mapping early by the fit's error moves up.
    if (ns->global_start < submitted) move(static_cast<int64_t>(submitted - ns->global_start));
    // Relaxed: see note_submission.
    const uint64_t observed = observed_ns_.load(std::memory_order_relaxed);
    if (observed == 0 || ns->global_end <= observed) return;
    // The end timer ran before the host saw the flag: a mapping late by the fit's error moves
    // back as far as the submission allows, and what is still late is cut.
    move(-static_cast<int64_t>(std::min(ns->global_end - observed, ns->global_start - submitted)));
    if (ns->global_end > observed) ns->global_end = ns->context_end = observed;
    if (ns->global_start > observed) ns->global_start = ns->context_start = observed;
}

ze_result_t CudaEvent::host_synchronize(uint64_t timeout_ns) {
    CudaDevice& dev = device();
    bool lost = false;
    const bool done = poll_until(
        [&] {
            lost = dev.lost();
            return lost || flag() != 0;
        },
        timeout_ns);
    if (lost) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!done) return ZE_RESULT_NOT_READY;
    note_observed();
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaEvent::host_signal() {
    if (device().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    // Release: a thread (or stream) that sees the flag sees what this thread did before.
    flag_of(slot_).store(kSignalledByHost, std::memory_order_release);
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaEvent::host_reset() {
    if (device().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    slot_->start = 0;
    slot_->end = 0;
    slot_->submitted_ns = 0;
    // Relaxed: see note_submission.
    observed_ns_.store(0, std::memory_order_relaxed);
    writer_.store(nullptr, std::memory_order_relaxed);
    // Release: the cleared timestamps are in place before the flag says "not signalled".
    flag_of(slot_).store(0, std::memory_order_release);
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaEvent::query_packets(uint32_t* count, hal::KernelTimestampResult* out, bool synchronized) {
    CudaDevice& dev = device();
    if (dev.lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const uint32_t flags = pool_->flags_;
    if (!(flags & (hal::kPoolKernelTimestamp | hal::kPoolKernelMappedTimestamp)))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (synchronized && !(flags & hal::kPoolKernelMappedTimestamp)) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (*count != 0 && !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const uint32_t state = flag();
    if (state == 0) return ZE_RESULT_NOT_READY;
    // One packet (the whole GPU) when a command recorded timestamps; none when the host
    // signalled the event.
    const uint32_t packets = state == kSignalledWithTimestamps ? 1 : 0;
    if (*count == 0 || packets == 0) {
        *count = packets;
        return ZE_RESULT_SUCCESS;
    }
    hal::KernelTimestampResult ticks{};
    ticks.global_start = ticks.context_start = slot_->start;
    ticks.global_end = ticks.context_end = slot_->end;
    // Relaxed: see note_submission.
    if (CudaDevice* writer = writer_.load(std::memory_order_relaxed); writer && writer != &dev) {
        // Another GPU's timer: through host time into this device's ticks.
        for (uint64_t* t : {&ticks.global_start, &ticks.global_end}) {
            uint64_t host_ns = 0;
            if (ze_result_t r = writer->clock().to_host(*t, &host_ns); r != ZE_RESULT_SUCCESS) return r;
            if (ze_result_t r = dev.clock().to_ticks(host_ns, t); r != ZE_RESULT_SUCCESS) return r;
        }
        ticks.context_start = ticks.global_start;
        ticks.context_end = ticks.global_end;
    }
    if (synchronized) {
        hal::TimestampReference ref{};
        ref.ticks = ticks.global_start;
        if (ze_result_t r = dev.clock().to_host(ticks.global_start, &ref.host_ns); r != ZE_RESULT_SUCCESS) return r;
        const hal::DeviceProperties& p = dev.properties();
        hal::KernelTimestampResult ns = hal::synchronize_packet(ticks, ref, p.timer_hz, p.kernel_timestamp_valid_bits);
        bound_to_host_view(&ns);
        out[0] = ns;
    } else {
        out[0] = ticks;
    }
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaEvent::query_kernel_timestamps(uint32_t* count, hal::KernelTimestampResult* out) {
    return query_packets(count, out, false);
}

ze_result_t CudaEvent::query_synchronized_timestamps(uint32_t* count, hal::KernelTimestampResult* out) {
    return query_packets(count, out, true);
}

CudaEvent* cuda_event_of(const hal::EventRef& event, const CudaDevice& device) noexcept {
    auto* e = dynamic_cast<CudaEvent*>(event.get());
    if (!e || &e->device() != &device) return nullptr;
    return e;
}

}  // namespace zehal::cuda
