#include "hal/cuda/cuda_queue.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>

#include "common/clock.hpp"

namespace zehal::cuda {

namespace {

CUdeviceptr address(const void* p) noexcept { return reinterpret_cast<CUdeviceptr>(p); }

// The context whose memory device operand `o` is: a peer's, or `own`. Naming both contexts
// spares the driver looking the pointers up (cuMemcpyPeerAsync beside cuMemcpyAsync).
CUcontext context_of(const hal::Operand& o, CUcontext own) noexcept {
    return o.placement == hal::Placement::peer ? static_cast<CudaDevice&>(*o.peer).context() : own;
}

// Host memory of any kind (the CPU may touch it; the rest goes through staging). A peer's
// device memory is device memory: unified addressing copies it (docs/devices.md).
bool is_host(const hal::Operand& o) noexcept { return !hal::is_device_memory(o.placement); }

// Host memory is filled by the CPU, in stream order (a host function): the copy engines
// cannot take pageable memory, and cuMemsetD*Async into pinned host memory is synchronous
// with the host (CUDA's API synchronization rules), so behind a wait on an event the host
// signals later it would block the caller for good.
bool cpu_fills(const hal::Operand& o) noexcept { return is_host(o); }

// Peer access set up for the operands that are a peer's memory (CudaDevice::use_peer).
ze_result_t use_peers(CudaDevice& device, const hal::Operand& a, const hal::Operand& b) {
    for (const hal::Operand* o : {&a, &b}) {
        if (o->placement != hal::Placement::peer) continue;
        // find_operand places only memory of a device of this backend as a peer's.
        if (ze_result_t r = device.use_peer(static_cast<CudaDevice&>(*o->peer)); r != ZE_RESULT_SUCCESS) return r;
    }
    return ZE_RESULT_SUCCESS;
}

// The shortest power-of-two period of `pattern` (its size a power of two): 1 for 0xAB
// repeated, 4 for one 32-bit word repeated, up to `size`.
// Holds on the host operands of a command on the pageable path (PageableCopier::Holds),
// released here unless the copier took them over.
struct HostHolds {
    PageableCopier::Holds of = {nullptr, nullptr};
    HostHolds() = default;
    HostHolds(const HostHolds&) = delete;
    HostHolds& operator=(const HostHolds&) = delete;
    ~HostHolds() {
        for (hal::PointerRegistry::InFlight* h : of) hal::PointerRegistry::release(h);
    }
};

size_t period_of(const uint8_t* pattern, size_t size) noexcept {
    for (size_t p = 1; p < size; p *= 2) {
        bool repeats = true;
        for (size_t i = p; i < size && repeats; ++i) repeats = pattern[i] == pattern[i % p];
        if (repeats) return p;
    }
    return size;
}

}  // namespace

ze_result_t CudaQueue::create(const std::shared_ptr<CudaDevice>& device, uint32_t ordinal, uint32_t index,
                              std::shared_ptr<hal::Queue>* out) {
    if (ze_result_t r = device->ready(); r != ZE_RESULT_SUCCESS) return r;
    const DriverApi& api = device->api();
    ContextScope scope(api, device->context());
    CUstream stream = nullptr;
    if (CUresult r = api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING); r != CUDA_SUCCESS) return device->check(r);
    try {
        *out = std::make_shared<CudaQueue>(device, ordinal, index, stream);
    } catch (const std::bad_alloc&) {
        api.cuStreamDestroy(stream);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

CudaQueue::CudaQueue(std::shared_ptr<CudaDevice> device, uint32_t ordinal, uint32_t index, CUstream stream)
    : device_(std::move(device)),
      api_(device_->api()),
      ordinal_(ordinal),
      index_(index),
      stream_(stream),
      pageable_(api_),
      operands_(device_->operand_cache()) {}

CudaQueue::~CudaQueue() {
    // Work still queued completes; the stream's resources go once it has. The staging
    // buffer goes only once the stream is done with it.
    ContextScope scope(api_, device_->context());
    if (pageable_.in_use() || scratch_) {
        api_.cuStreamSynchronize(stream_);
        pageable_.release();
        if (scratch_) api_.cuMemFreeHost(scratch_);
    }
    api_.cuStreamDestroy(stream_);
}

CUresult CudaQueue::begin_locked(CudaEvent* signal, std::span<const hal::EventRef> waits, bool* waited) {
    if (waited) *waited = false;
    for (const hal::EventRef& w : waits) {
        auto* e = static_cast<CudaEvent*>(w.get());
        // Already signalled and no reset queued before it here: nothing to wait for (a reset
        // elsewhere after this point is the caller's race).
        if (e->flag() != 0 && !resets_queued_) continue;
        if (waited) *waited = true;
        if (CUresult r = api_.cuStreamWaitValue32(stream_, e->flag_address(), kSignalledByHost,
                                                  CU_STREAM_WAIT_VALUE_GEQ);
            r != CUDA_SUCCESS)
            return r;
    }
    if (signal && signal->records_timestamps()) {
        signal->note_submission(host_now_ns(), device_.get());
        return device_->kernels().timestamp(api_, stream_, &signal->slot()->start);
    }
    return CUDA_SUCCESS;
}

CUresult CudaQueue::end_locked(CudaEvent* signal) {
    if (!signal) return CUDA_SUCCESS;
    if (signal->records_timestamps())
        return device_->kernels().timestamp_signal(api_, stream_, &signal->slot()->end, &signal->slot()->flag,
                                                   kSignalledWithTimestamps);
    // The default flags put a system-wide fence before the write: the work's results are
    // visible to whoever sees the flag.
    return api_.cuStreamWriteValue32(stream_, signal->flag_address(), kSignalledByHost, CU_STREAM_WRITE_VALUE_DEFAULT);
}

CUresult CudaQueue::probe_export_locked(const hal::Allocation& dst_alloc, const void* dst, size_t size) {
    if (!dst_alloc.info.imported) return CUDA_SUCCESS;
    CudaTrace* trace = device_->trace();
    if (!trace) return CUDA_SUCCESS;
    ExportProbeSlot* slot = trace->reserve_export_probe();
    if (!slot) return CUDA_SUCCESS;
    return device_->kernels().export_probe(api_, stream_, dst, static_cast<uint32_t>(std::min<size_t>(size, 4)), slot);
}

ze_result_t CudaQueue::find_operand(const void* p, size_t size, hal::OperandUse use, hal::Operand* out,
                                    hal::PointerRegistry::InFlight** held) {
    if (held) *held = nullptr;
    if (auto r = device_->find_virtual(p, size, use, out)) return *r;
    // No context: the look-up asks the driver only through unified addressing
    // (ForeignCudaMemory), which answers with none current.
    std::lock_guard lock(mu_);
    return operands_.find(p, size, out);
}

ze_result_t CudaQueue::do_append_copy(void* dst, hal::PlacedOperand& to_operand, const void* src,
                                      hal::PlacedOperand& from_operand, size_t size, const hal::EventRef& signal,
                                      std::span<const hal::EventRef> waits) {
    const hal::Operand& to = to_operand.operand;
    const hal::Operand& from = from_operand.operand;
    auto* signal_event = static_cast<CudaEvent*>(signal.get());
    std::lock_guard lock(mu_);
    if (ze_result_t r = use_peers(*device_, to, from); r != ZE_RESULT_SUCCESS) return r;
    // Pageable memory goes through the copier, and so does a copy between two host memories:
    // cuMemcpyAsync between host memories is synchronous with the host (CUDA's API
    // synchronization rules), so behind a wait it would block the caller; the copier's host
    // function copies on the CPU in stream order. Host functions touch the host operands
    // later: they hold them until then, so that the memory is not freed under them
    // (cuMemFree knows nothing of them). System memory is not held: the caller keeps it alive.
    const bool pageable = hal::is_pageable(to.placement) || hal::is_pageable(from.placement) ||
                          (is_host(to) && is_host(from));
    // The queue's context is made current only for the copier, whose staging memory is
    // allocated in the current context. Copies, stream memory operations and kernel
    // launches run in their stream's context whatever is current (docs/cuda.md); switching
    // to it and back would cost a small peer copy a sixth of zehal's part of its submission.
    std::optional<ContextScope> scope;
    if (pageable) scope.emplace(api_, device_->context());
    HostHolds holds;
    if (pageable && is_host(to)) {
        if (ze_result_t r = device_->hold_memory(dst, size, &holds.of[0]); r != ZE_RESULT_SUCCESS) return r;
    }
    if (pageable && is_host(from)) {
        if (ze_result_t r = device_->hold_memory(src, size, &holds.of[1]); r != ZE_RESULT_SUCCESS) return r;
    }

    // A copy from pageable memory may run at once when the stream has nothing queued and the
    // command waits for nothing (PageableCopier).
    const bool idle = pageable && hal::is_pageable(from.placement) && !is_host(to) &&
                      api_.cuStreamQuery(stream_) == CUDA_SUCCESS;
    bool waited = false;
    CUresult r = begin_locked(signal_event, waits, &waited);
    if (r == CUDA_SUCCESS) {
        if (pageable)
            r = pageable_.copy(stream_, dst, is_host(to), src, is_host(from), size, idle && !waited, holds.of);
        else if ((to.placement == hal::Placement::peer || from.placement == hal::Placement::peer) && !is_host(to) &&
                 !is_host(from))
            r = api_.cuMemcpyPeerAsync(address(dst), context_of(to, device_->context()), address(src),
                                       context_of(from, device_->context()), size, stream_);
        else
            r = api_.cuMemcpyAsync(address(dst), address(src), size, stream_);
    }
    // Exported memory is this device's own (a peer's is probed by none).
    if (r == CUDA_SUCCESS && to.placement == hal::Placement::device) r = probe_export_locked(to.allocation, dst, size);
    if (r == CUDA_SUCCESS) r = end_locked(signal_event);
    return device_->check(r);
}

CUresult CudaQueue::fill_locked(CUdeviceptr dst, const uint8_t* pattern, size_t pattern_size, size_t size) {
    const size_t p = period_of(pattern, pattern_size);
    if (p == 1) return api_.cuMemsetD8Async(dst, pattern[0], size, stream_);
    uint32_t word = 0;
    if (p == 2 && dst % 2 == 0) {
        uint16_t half = 0;
        std::memcpy(&half, pattern, 2);
        return api_.cuMemsetD16Async(dst, half, size / 2, stream_);
    }
    if (p == 4 && dst % 4 == 0) {
        std::memcpy(&word, pattern, 4);
        return api_.cuMemsetD32Async(dst, word, size / 4, stream_);
    }
    // A longer period, or a start the wide memsets cannot take: one strided memset per
    // 32-bit word (per byte when unaligned) of the period, a row per repetition.
    const size_t rows = size / p;
    if (dst % 4 == 0 && p % 4 == 0) {
        for (size_t j = 0; j < p; j += 4) {
            std::memcpy(&word, pattern + j, 4);
            if (CUresult r = api_.cuMemsetD2D32Async(dst + j, p, word, 1, rows, stream_); r != CUDA_SUCCESS) return r;
        }
        return CUDA_SUCCESS;
    }
    for (size_t j = 0; j < p; ++j) {
        if (CUresult r = api_.cuMemsetD2D8Async(dst + j, p, pattern[j], 1, rows, stream_); r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}

ze_result_t CudaQueue::do_append_fill(void* dst, hal::PlacedOperand& to_operand, const void* pattern,
                                      size_t pattern_size, size_t size, const hal::EventRef& signal,
                                      std::span<const hal::EventRef> waits) {
    const hal::Operand& to = to_operand.operand;
    auto* signal_event = static_cast<CudaEvent*>(signal.get());
    ContextScope scope(api_, device_->context());
    std::lock_guard lock(mu_);
    // A fill is a kernel: it writes a peer's memory only through peer access.
    if (to.placement == hal::Placement::peer && !device_->can_access_peer(*to.peer))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (ze_result_t r = use_peers(*device_, to, to); r != ZE_RESULT_SUCCESS) return r;
    HostHolds holds;  // as in do_append_copy
    if (cpu_fills(to)) {
        if (ze_result_t r = device_->hold_memory(dst, size, &holds.of[0]); r != ZE_RESULT_SUCCESS) return r;
    }

    CUresult r = begin_locked(signal_event, waits);
    const auto* bytes = static_cast<const uint8_t*>(pattern);
    if (r == CUDA_SUCCESS) {
        if (cpu_fills(to))
            r = pageable_.fill(stream_, dst, bytes, pattern_size, size, holds.of);
        else
            r = fill_locked(address(dst), bytes, pattern_size, size);
    }
    // Exported memory is this device's own (a peer's is probed by none).
    if (r == CUDA_SUCCESS && to.placement == hal::Placement::device) r = probe_export_locked(to.allocation, dst, size);
    if (r == CUDA_SUCCESS) r = end_locked(signal_event);
    return device_->check(r);
}

ze_result_t CudaQueue::do_append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    auto* signal_event = static_cast<CudaEvent*>(signal.get());
    // Stream order already puts everything submitted before behind the barrier's signal.
    ContextScope scope(api_, device_->context());
    std::lock_guard lock(mu_);
    CUresult r = begin_locked(signal_event, waits);
    if (r == CUDA_SUCCESS) r = end_locked(signal_event);
    return device_->check(r);
}

ze_result_t CudaQueue::do_append_event_reset(const hal::EventRef& event) {
    auto* e = static_cast<CudaEvent*>(event.get());
    ContextScope scope(api_, device_->context());
    std::lock_guard lock(mu_);
    resets_queued_ = true;
    // The start and end ticks (four words after the flag word and its neighbour), then the
    // flag: stream writes, since a memset of the slot's pinned host memory would be
    // synchronous with the host (and block the caller behind a wait).
    const CUdeviceptr ticks = e->flag_address() + (offsetof(EventSlot, start) - offsetof(EventSlot, flag));
    CUresult r = CUDA_SUCCESS;
    for (CUdeviceptr word = ticks; word < ticks + 4 * sizeof(uint32_t) && r == CUDA_SUCCESS; word += sizeof(uint32_t))
        r = api_.cuStreamWriteValue32(stream_, word, 0, CU_STREAM_WRITE_VALUE_DEFAULT);
    if (r == CUDA_SUCCESS) r = api_.cuStreamWriteValue32(stream_, e->flag_address(), 0, CU_STREAM_WRITE_VALUE_DEFAULT);
    return device_->check(r);
}

ze_result_t CudaQueue::do_append_write_global_timestamp(uint64_t* dst, hal::PlacedOperand& to_operand,
                                                        const hal::EventRef& signal,
                                                        std::span<const hal::EventRef> waits) {
    const hal::Operand& to = to_operand.operand;
    auto* signal_event = static_cast<CudaEvent*>(signal.get());
    std::lock_guard lock(mu_);

    const bool pageable = hal::is_pageable(to.placement);
    // The host function that copies the scratch word out holds the destination until then.
    HostHolds holds;
    if (pageable) {
        if (ze_result_t r = device_->hold_memory(dst, sizeof *dst, &holds.of[0]); r != ZE_RESULT_SUCCESS) return r;
    }
    ContextScope scope(api_, device_->context());
    if (pageable && !scratch_) {
        void* p = nullptr;
        const unsigned flags = CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP;
        if (CUresult r = api_.cuMemHostAlloc(&p, sizeof *scratch_, flags); r != CUDA_SUCCESS)
            return r == CUDA_ERROR_OUT_OF_MEMORY ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY : device_->check(r);
        scratch_ = static_cast<uint64_t*>(p);
    }
    CUresult r = begin_locked(signal_event, waits);
    // The stream runs one command at a time: the scratch word is copied out before the
    // next timestamp overwrites it.
    if (r == CUDA_SUCCESS) r = device_->kernels().timestamp(api_, stream_, pageable ? scratch_ : dst);
    if (r == CUDA_SUCCESS && pageable)
        r = pageable_.copy(stream_, dst, true, scratch_, true, sizeof *dst, false, holds.of);
    if (r == CUDA_SUCCESS) r = probe_export_locked(to.allocation, dst, sizeof *dst);
    if (r == CUDA_SUCCESS) r = end_locked(signal_event);
    return device_->check(r);
}

ze_result_t CudaQueue::do_append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst,
                                                         const size_t* offsets, std::span<const hal::Operand> placed,
                                                         const hal::EventRef& signal,
                                                         std::span<const hal::EventRef> waits) {
    constexpr size_t kResult = sizeof(hal::KernelTimestampResult);
    auto* signal_event = static_cast<CudaEvent*>(signal.get());
    ContextScope scope(api_, device_->context());
    std::lock_guard lock(mu_);
    CUresult r = begin_locked(signal_event, waits);
    for (size_t i = 0; i < events.size() && r == CUDA_SUCCESS; ++i) {
        auto* e = static_cast<CudaEvent*>(events[i].get());
        char* out = static_cast<char*>(dst) + (offsets ? offsets[i] : i * kResult);
        // One packet: its global and its context pair are both the slot's (start, end).
        const uint64_t* ticks = &e->slot()->start;
        const CUdeviceptr from = e->flag_address() + (offsetof(EventSlot, start) - offsetof(EventSlot, flag));
        for (size_t half = 0; half < kResult && r == CUDA_SUCCESS; half += kResult / 2) {
            // Into host memory on the CPU in stream order: a copy between host memories
            // (the slot is pinned host memory) is synchronous with the host.
            if (is_host(placed[i])) {
                // Held until the host function that writes it has run.
                HostHolds holds;
                if (device_->hold_memory(out + half, kResult / 2, &holds.of[0]) == ZE_RESULT_SUCCESS)
                    r = pageable_.copy(stream_, out + half, true, ticks, true, kResult / 2, false, holds.of);
                else
                    r = CUDA_ERROR_INVALID_VALUE;
            } else
                r = api_.cuMemcpyAsync(address(out + half), from, kResult / 2, stream_);
        }
        if (r == CUDA_SUCCESS) r = probe_export_locked(placed[i].allocation, out, kResult);
    }
    if (r == CUDA_SUCCESS) r = end_locked(signal_event);
    return device_->check(r);
}

ze_result_t CudaQueue::do_host_synchronize(uint64_t timeout_ns) {
    // No context: a stream names its own (as cudaStreamSynchronize needs no current device).
    CUresult r = CUDA_ERROR_NOT_READY;
    if (timeout_ns == kWaitForever) {
        r = api_.cuStreamSynchronize(stream_);
    } else {
        poll_until(
            [&] {
                r = api_.cuStreamQuery(stream_);
                return r != CUDA_ERROR_NOT_READY;
            },
            timeout_ns);
        if (r == CUDA_ERROR_NOT_READY) return ZE_RESULT_NOT_READY;
    }
    if (r == CUDA_SUCCESS) device_->flush_printf();
    return device_->check(r);
}

}  // namespace zehal::cuda
