// Queues of the CUDA backend: one non-blocking stream each.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>

#include "hal/cuda/cuda_device.hpp"
#include "hal/cuda/cuda_event.hpp"
#include "hal/cuda/pageable_copy.hpp"
#include "hal/host_memory.hpp"
#include "hal/queue.hpp"

namespace zehal::cuda {

// A queue on a CUDA stream created with CU_STREAM_NON_BLOCKING. A command is its waits
// (cuStreamWaitValue32 on each event flag not yet set), the work (cuMemcpyAsync or
// cuMemset*Async), and its signal (cuStreamWriteValue32 of the flag; for timestamp events
// the timer kernel before the work and the timer-and-signal kernel after it). The CUDA
// driver picks the engine: ordinal and index only select which queue the caller gets.
// Host memory of another backend and system memory are pageable to CUDA: copies and fills
// touching them run through PageableCopier, in stream order like any other work (a copy
// from pageable memory on an idle stream runs at once, as cuMemcpyHtoDAsync's does).
// Memory another library allocated with the CUDA driver is what the driver says it is
// (ForeignCudaMemory): device memory of this device is used as device memory.
class CudaQueue final : public hal::Queue {
public:
    // A queue on `device` (ready) for engine `index` of group `ordinal` (hal::Device checked
    // both).
    static ze_result_t create(const std::shared_ptr<CudaDevice>& device, uint32_t ordinal, uint32_t index,
                              std::shared_ptr<hal::Queue>* out);
    CudaQueue(std::shared_ptr<CudaDevice> device, uint32_t ordinal, uint32_t index, CUstream stream);
    ~CudaQueue() override;

    uint32_t ordinal() const override { return ordinal_; }
    uint32_t index() const override { return index_; }

    // The stream (for benchmarks beside raw CUDA).
    CUstream stream() const noexcept { return stream_; }

private:
    bool lost() const noexcept override { return device_->lost(); }
    // A range of the device's virtual memory (CudaDevice::find_virtual), else what the
    // operand cache finds, with the context current: the driver is asked about memory zehal
    // did not allocate (ForeignCudaMemory). Holds nothing: host operands on the pageable
    // path are held by the command that copies them (hold_memory).
    ze_result_t find_operand(const void* p, size_t size, hal::OperandUse use, hal::Operand* out,
                             hal::PointerRegistry::InFlight** held) override;
    const hal::Device& device() const noexcept override { return *device_; }
    bool owns_kernel(const hal::Kernel& kernel) const noexcept override;

    ze_result_t do_append_copy(void* dst, hal::PlacedOperand& to, const void* src, hal::PlacedOperand& from,
                               size_t size, const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_fill(void* dst, hal::PlacedOperand& to, const void* pattern, size_t pattern_size, size_t size,
                               const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // Device-side writes in stream order: a reset is a stream write of 0 to the event's
    // flag (and its timestamps cleared by a memset); a global timestamp is the timer kernel
    // writing %globaltimer to the destination; a kernel timestamp query copies the event
    // slots' start and end ticks. Destinations in pageable memory are reached through
    // host functions (PageableCopier), which make no CUDA call.
    ze_result_t do_append_event_reset(const hal::EventRef& event) override;
    ze_result_t do_append_write_global_timestamp(uint64_t* dst, hal::PlacedOperand& to, const hal::EventRef& signal,
                                                 std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst,
                                                  const size_t* offsets, std::span<const hal::Operand> placed,
                                                  const hal::EventRef& signal,
                                                  std::span<const hal::EventRef> waits) override;
    // Pageable memory is out of a kernel's reach: a pointer argument into it is
    // INVALID_ARGUMENT.
    ze_result_t do_append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, hal::PlacedLaunch& launch,
                                 const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // UNSUPPORTED_FEATURE: a stream launches with the grid given at enqueue time, and
    // neither a host function nor a kernel (without dynamic parallelism) can launch a kernel
    // in stream order, so counts in device memory cannot be read when the launch runs
    // without a host wait in the caller.
    ze_result_t do_append_launch_indirect(std::span<const hal::KernelRef> kernels, const hal::GroupCount* groups,
                                          const uint32_t* count, hal::PlacedIndirectLaunch& launch,
                                          const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // cuStreamSynchronize for no limit, else polls cuStreamQuery. Streams cannot take
    // commands back: cancel is the base's (NOT_READY).
    ze_result_t do_host_synchronize(uint64_t timeout_ns) override;

    // Enqueues the waits and, for a timestamp event, the start timer; *waited (when given)
    // says whether a wait was enqueued (an event not yet signalled). Caller holds mu_.
    CUresult begin_locked(CudaEvent* signal, std::span<const hal::EventRef> waits, bool* waited = nullptr);
    // Enqueues the signal (and end timer). Caller holds mu_.
    CUresult end_locked(CudaEvent* signal);
    // Enqueues the fill itself. Caller holds mu_.
    CUresult fill_locked(CUdeviceptr dst, const uint8_t* pattern, size_t pattern_size, size_t size);
    // Enqueues a probe of the first word written at `dst` when it is exported memory the
    // tracer watches. Caller holds mu_.
    CUresult probe_export_locked(const hal::Allocation& dst_alloc, const void* dst, size_t size);

    const std::shared_ptr<CudaDevice> device_;
    const DriverApi& api_;
    const uint32_t ordinal_;
    const uint32_t index_;
    const CUstream stream_;
    std::mutex mu_;            // keeps each command's waits, work and signal together on the stream
    PageableCopier pageable_;  // guarded by mu_
    // Pinned word the timer kernel writes for a timestamp bound for pageable memory,
    // allocated on first use. Guarded by mu_.
    uint64_t* scratch_ = nullptr;
    // Set (under mu_) once a reset was queued: from then on a wait is enqueued even for an
    // event signalled now, since a reset before it in the stream may clear it first.
    bool resets_queued_ = false;
    hal::OperandCache operands_;  // guarded by mu_
};

}  // namespace zehal::cuda
