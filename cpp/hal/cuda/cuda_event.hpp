// Events of the CUDA backend: a 32-bit flag per event in pinned, mapped host memory, so
// that the host signals and queries it with plain memory operations, and streams signal
// it (cuStreamWriteValue32 or the timestamp kernel) and wait on it (cuStreamWaitValue32)
// whether the host or a command on any stream sets it, before or after the wait was
// submitted. Timestamp pools also hold the %globaltimer ticks read around the command.
#pragma once

#include <atomic>

#include <cstdint>
#include <memory>

#include "hal/cuda/cuda_device.hpp"
#include "hal/cuda/poll_until.hpp"
#include "hal/event.hpp"

namespace zehal::cuda {

// An event's memory: written by the device and the host, read by the host.
struct alignas(32) EventSlot {
    uint32_t flag;  // 0 not signalled; kSignalledByHost or kSignalledWithTimestamps
    uint32_t reserved;
    uint64_t start;         // %globaltimer ticks before the command
    uint64_t end;           // %globaltimer ticks after it
    uint64_t submitted_ns;  // host clock when the command was submitted (written by the host)
};
static_assert(sizeof(EventSlot) == 32, "slots are 32 bytes");

// Flag values: any non-zero value is "signalled" (stream waits use >= 1).
inline constexpr uint32_t kSignalledByHost = 1;          // also cuStreamWriteValue32's value
inline constexpr uint32_t kSignalledWithTimestamps = 2;  // written by the timestamp kernel

class CudaEventPool;

// One event of a CudaEventPool.
class CudaEvent final : public hal::Event {
public:
    ze_result_t query() override;
    ze_result_t host_synchronize(uint64_t timeout_ns) override;
    ze_result_t host_signal() override;
    ze_result_t host_reset() override;
    ze_result_t query_kernel_timestamps(uint32_t* count, hal::KernelTimestampResult* out) override;
    ze_result_t query_synchronized_timestamps(uint32_t* count, hal::KernelTimestampResult* out) override;
    hal::EventPool& pool() override;

    // --- for queues ---
    CudaDevice& device() const noexcept;
    // Whether commands signalling it record timestamps.
    bool records_timestamps() const noexcept;
    // The slot (host address = device address under unified addressing).
    EventSlot* slot() const noexcept { return slot_; }
    // The device address of the flag, for stream memory operations.
    CUdeviceptr flag_address() const noexcept { return device_slot_ + offsetof(EventSlot, flag); }
    // The flag now; acquire: the timestamps written before it are visible.
    uint32_t flag() const noexcept;
    // A command that records timestamps is being submitted at host instant `host_ns` on a
    // stream of `writer` (this event's device or another CUDA device, whose %globaltimer
    // the command then writes: a query maps those ticks to this event's device).
    void note_submission(uint64_t host_ns, CudaDevice* writer) noexcept;

private:
    friend class CudaEventPool;
    ze_result_t query_packets(uint32_t* count, hal::KernelTimestampResult* out, bool synchronized);
    // The host saw the event signalled (a wait or query that answers SUCCESS): keeps the
    // first such instant since the last submission.
    void note_observed() noexcept;
    // `ns` (a synchronized packet) moved, then cut, into what the host saw of the command:
    // after its submission, before a host wait saw it complete (contract §3's ordering),
    // whatever the error of the clock fit.
    void bound_to_host_view(hal::KernelTimestampResult* ns) const noexcept;

    CudaEventPool* pool_ = nullptr;
    EventSlot* slot_ = nullptr;
    CUdeviceptr device_slot_ = 0;
    // Host ns when a wait or query first saw the flag set since the last submission; 0 none.
    std::atomic<uint64_t> observed_ns_{0};
    // The device whose stream writes the timestamps of the last submission; null none.
    std::atomic<CudaDevice*> writer_{nullptr};
};

// A fixed number of events over one pinned array of slots.
class CudaEventPool final : public hal::EventPool, public std::enable_shared_from_this<CudaEventPool> {
public:
    // Most events one pool holds (as the sim device).
    static constexpr uint32_t kMaxEvents = 1u << 20;

    // A pool of `count` events with EventPoolFlag `flags` on `device` (ready), as
    // hal::Device::create_event_pool checked them; UNSUPPORTED_SIZE above kMaxEvents.
    static ze_result_t create(const std::shared_ptr<CudaDevice>& device, uint32_t count, uint32_t flags,
                              std::shared_ptr<hal::EventPool>* out);
    CudaEventPool(std::shared_ptr<CudaDevice> device, uint32_t count, uint32_t flags);
    ~CudaEventPool() override;

    uint32_t count() const override { return count_; }
    uint32_t flags() const override { return flags_; }
    ze_result_t event(uint32_t index, hal::EventRef* out) override;

    CudaDevice& device() const noexcept { return *device_; }

private:
    friend class CudaEvent;
    const std::shared_ptr<CudaDevice> device_;
    const uint32_t count_;
    const uint32_t flags_;
    EventSlot* slots_ = nullptr;  // pinned, mapped
    std::unique_ptr<CudaEvent[]> events_;
};

// The CudaEvent behind `event` when it belongs to `device`; null for a null event, an
// event of another device or of another backend.
CudaEvent* cuda_event_of(const hal::EventRef& event, const CudaDevice& device) noexcept;

}  // namespace zehal::cuda
