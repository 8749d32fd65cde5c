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

    ze_result_t append_copy(void* dst, const void* src, size_t size, const hal::EventRef& signal,
                            std::span<const hal::EventRef> waits) override;
    ze_result_t append_fill(void* dst, const void* pattern, size_t pattern_size, size_t size,
                            const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    ze_result_t append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) override;
    // The engine runs these itself, as steps in queue order (sim_engine.hpp).
    ze_result_t append_event_reset(const hal::EventRef& event) override;
    ze_result_t append_write_global_timestamp(uint64_t* dst, const hal::EventRef& signal,
                                              std::span<const hal::EventRef> waits) override;
    ze_result_t append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst, const size_t* offsets,
                                               const hal::EventRef& signal,
                                               std::span<const hal::EventRef> waits) override;
    ze_result_t append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, const hal::EventRef& signal,
                              std::span<const hal::EventRef> waits) override;
    ze_result_t host_synchronize(uint64_t timeout_ns) override;
    ze_result_t cancel(const hal::EventRef& signal) override;
    uint32_t ordinal() const override { return state_->ordinal; }
    uint32_t index() const override { return state_->index; }

private:
    // The holds a command takes on its operands' memory (SimDevice::find_memory): released
    // when this goes unless submit() hands them to the command. A peer device whose memory an
    // operand is stays alive until then (its destruction waits for the holds).
    struct Holds {
        hal::PointerRegistry::InFlight* of[2] = {nullptr, nullptr};  // dst, src
        hal::DeviceRef peer[2];                                      // dst's, src's owner when a peer
        Holds() = default;
        Holds(const Holds&) = delete;
        Holds& operator=(const Holds&) = delete;
        ~Holds();
    };

    // INVALID_NULL_HANDLE for a null wait event, INVALID_ARGUMENT for an event of another device.
    ze_result_t check_events(const hal::EventRef& signal, std::span<const hal::EventRef> waits) const;
    // Queues one validated command; on SUCCESS it takes over `holds.of` (its operands' memory,
    // nulled here), else they stay with the caller. `events` and `offsets` are a step's (Command);
    // `work` a kernel's, taken over on SUCCESS.
    ze_result_t submit(CommandKind kind, void* dst, const void* src, size_t size, const void* pattern,
                       size_t pattern_size, uint32_t export_group, const hal::EventRef& signal,
                       std::span<const hal::EventRef> waits, Holds& holds, std::span<const hal::EventRef> events = {},
                       std::span<const size_t> offsets = {}, std::unique_ptr<KernelWork>* work = nullptr);

    const std::shared_ptr<SimDevice> device_;
    Engine* const engine_;
    const std::shared_ptr<QueueState> state_;
};

}  // namespace zehal::sim
