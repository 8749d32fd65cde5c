// A queue of the software device: an asynchronous immediate command list on one engine.
#pragma once

#include <memory>

#include "hal/queue.hpp"
#include "hal/sim/sim_device.hpp"
#include "hal/sim/sim_engine.hpp"

namespace zehal::sim {

// Validates and submits commands to its QueueState; the engine runs them. Keeps its device
// alive. Every method is thread-safe.
class SimQueue final : public hal::Queue {
public:
    SimQueue(std::shared_ptr<SimDevice> device, Engine* engine, std::shared_ptr<QueueState> state);
    // Closes the queue; what was submitted still runs.
    ~SimQueue() override;

    uint32_t ordinal() const override { return state_->ordinal; }
    uint32_t index() const override { return state_->index; }

private:
    bool lost() const noexcept override { return device_->lost(); }
    // SimDevice::find_memory: zehal allocations are held for the command.
    ze_result_t find_operand(const void* p, size_t size, hal::OperandUse use, hal::Operand* out,
                             hal::PointerRegistry::InFlight** held) override;
    const hal::Device& device() const noexcept override { return *device_; }
    bool owns_kernel(const hal::Kernel& kernel) const noexcept override;

    ze_result_t do_append_copy(void* dst, hal::PlacedOperand& to, const void* src, hal::PlacedOperand& from,
                               size_t size, const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_fill(void* dst, hal::PlacedOperand& to, const void* pattern, size_t pattern_size, size_t size,
                               const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // The engine runs these itself, as steps in queue order (sim_engine.hpp).
    ze_result_t do_append_event_reset(const hal::EventRef& event) override;
    ze_result_t do_append_write_global_timestamp(uint64_t* dst, hal::PlacedOperand& to, const hal::EventRef& signal,
                                                 std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst,
                                                  const size_t* offsets, std::span<const hal::Operand> placed,
                                                  const hal::EventRef& signal,
                                                  std::span<const hal::EventRef> waits) override;
    ze_result_t do_append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, hal::PlacedLaunch& launch,
                                 const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // Reads the group counts when the engine reaches the command (SimIndirectLaunch).
    ze_result_t do_append_launch_indirect(std::span<const hal::KernelRef> kernels, const hal::GroupCount* groups,
                                          const uint32_t* count, hal::PlacedIndirectLaunch& launch,
                                          const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t do_host_synchronize(uint64_t timeout_ns) override;
    // Takes back a command the engine has not started.
    ze_result_t do_cancel(const hal::EventRef& signal) override;

    // The operands of one command (dst, src; either may be null): on SUCCESS submit() hands
    // their holds to the command, else they stay with the caller. A peer device whose memory
    // an operand is stays alive until the caller drops them (its destruction waits for the
    // holds).
    struct Operands {
        hal::PlacedOperand* to = nullptr;
        hal::PlacedOperand* from = nullptr;
    };
    // Queues one checked command; on SUCCESS it takes over the holds of `operands`.
    // `events` and `offsets` are a step's (Command); `work` a kernel's, taken over on SUCCESS.
    ze_result_t submit(CommandKind kind, void* dst, const void* src, size_t size, const void* pattern,
                       size_t pattern_size, uint32_t export_group, const hal::EventRef& signal,
                       std::span<const hal::EventRef> waits, Operands operands,
                       std::span<const hal::EventRef> events = {}, std::span<const size_t> offsets = {},
                       std::unique_ptr<KernelWork>* work = nullptr);

    const std::shared_ptr<SimDevice> device_;
    Engine* const engine_;
    const std::shared_ptr<QueueState> state_;
};

}  // namespace zehal::sim
