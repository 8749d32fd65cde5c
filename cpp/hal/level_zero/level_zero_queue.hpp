// Queues of the level_zero backend: one immediate command list each.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "hal/level_zero/level_zero_device.hpp"
#include "hal/level_zero/level_zero_event.hpp"
#include "hal/host_memory.hpp"
#include "hal/queue.hpp"

namespace zehal::level_zero {

// An asynchronous immediate command list on engine `index` of the driver's group for hal
// ordinal `ordinal`. A command is one append with its signal and wait events. Host memory
// of another backend is not memory the driver knows: commands touching it wait for the
// list to drain and move the bytes through host memory of the backend (pageable path).
class ZeQueue final : public hal::Queue {
public:
    // A queue on `device` for engine `index` of group `ordinal` (hal::Device checked both).
    static ze_result_t create(const std::shared_ptr<ZeDevice>& device, uint32_t ordinal, uint32_t index,
                              std::shared_ptr<hal::Queue>* out);
    ZeQueue(std::shared_ptr<ZeDevice> device, uint32_t ordinal, uint32_t index, ze_command_list_handle_t list,
            ze_event_pool_handle_t sync_pool, ze_event_handle_t sync_event, ze_event_handle_t drain_event);
    ~ZeQueue() override;

    uint32_t ordinal() const override { return ordinal_; }
    uint32_t index() const override { return index_; }

    // The command list (for benchmarks beside raw Level Zero).
    ze_command_list_handle_t list() const noexcept { return list_; }

private:
    bool lost() const noexcept override { return device_->lost(); }
    // The operand cache (hal::find_operand); holds nothing.
    ze_result_t find_operand(const void* p, size_t size, hal::OperandUse use, hal::Operand* out,
                             hal::PointerRegistry::InFlight** held) override;
    const hal::Device& device() const noexcept override { return *device_; }
    bool owns_kernel(const hal::Kernel& kernel) const noexcept override;

    ze_result_t do_append_copy(void* dst, hal::PlacedOperand& to, const void* src, hal::PlacedOperand& from,
                               size_t size, const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_fill(void* dst, hal::PlacedOperand& to, const void* pattern, size_t pattern_size, size_t size,
                               const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // The driver's own commands, appended to the list. A timestamp bound for host memory
    // of another backend is UNSUPPORTED_FEATURE: the driver can only write memory it knows,
    // and staging it would make the append wait for the list.
    ze_result_t do_append_event_reset(const hal::EventRef& event) override;
    ze_result_t do_append_write_global_timestamp(uint64_t* dst, hal::PlacedOperand& to, const hal::EventRef& signal,
                                                 std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst,
                                                  const size_t* offsets, std::span<const hal::Operand> placed,
                                                  const hal::EventRef& signal,
                                                  std::span<const hal::EventRef> waits) override;
    // The kernel keeps its arguments in the driver, which checks them (no snapshot here).
    ze_result_t do_append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, hal::PlacedLaunch& launch,
                                 const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // The driver's own indirect launches, which read the counts when they run.
    ze_result_t do_append_launch_indirect(std::span<const hal::KernelRef> kernels, const hal::GroupCount* groups,
                                          const uint32_t* count, hal::PlacedIndirectLaunch& launch,
                                          const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // The driver's list synchronization where it has one, else a barrier and its event.
    // Immediate command lists cannot take commands back: cancel is the base's (NOT_READY).
    ze_result_t do_host_synchronize(uint64_t timeout_ns) override;

    // The driver handles of `signal` and `waits` (events of this device, checked).
    struct Events {
        ze_event_handle_t signal = nullptr;
        std::vector<ze_event_handle_t> waits;
    };
    static ze_result_t events_of(const hal::EventRef& signal, std::span<const hal::EventRef> waits, Events* out);
    // Waits for `waits` and for every command of the list. Caller holds mu_.
    ze_result_t drain_locked(const Events& events);
    // A copy or fill touching host memory of another backend, done as described above;
    // `pattern` null for a copy. Caller holds mu_.
    ze_result_t pageable_locked(void* dst, const hal::Operand& to, const void* src, const hal::Operand& from,
                                const void* pattern, size_t pattern_size, size_t size, const Events& events);
    // Copies between device memory and host memory of another backend through host memory
    // of the backend, one staging buffer at a time. Caller holds mu_.
    ze_result_t staged_copy_locked(void* dst, bool dst_is_host, const void* src, size_t size);

    const std::shared_ptr<ZeDevice> device_;
    const ZeApi& api_;
    const uint32_t ordinal_;
    const uint32_t index_;
    const ze_command_list_handle_t list_;
    const ze_event_pool_handle_t sync_pool_;  // the two events below
    const ze_event_handle_t sync_event_;      // host_synchronize's barrier signal
    const ze_event_handle_t drain_event_;     // drain_locked's barrier signal
    std::mutex mu_;                           // appends to the list (immediate lists are not thread-safe)
    std::mutex sync_mu_;                      // one host_synchronize at a time; taken before mu_
    bool sync_pending_ = false;               // guarded by sync_mu_: sync_event_ awaits an earlier barrier
    uint64_t pending_mark_ = 0;               // guarded by sync_mu_: submitted_ when that barrier was appended
    uint64_t synced_ = 0;                     // guarded by sync_mu_: submitted_ covered by the last completed barrier
    uint64_t submitted_ = 0;                  // guarded by mu_: commands appended (a failed append counts too)
    hal::OperandCache operands_;              // guarded by mu_
};

}  // namespace zehal::level_zero
