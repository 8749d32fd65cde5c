// Command lists: regular ones record commands that a command queue runs on execution;
// immediate ones run each command on their own queue as it is appended.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "objects.hpp"
#include "hal/module.hpp"
#include "metrics/streamer.hpp"

namespace zehal::ze_driver {

// One command of a command list.
struct Command {
    enum class Kind {
        copy,              // size bytes from src to dst
        fill,              // size bytes at dst with pattern repeated
        barrier,           // after every earlier command (also signal-event and wait-on-events)
        reset,             // event `reset` back to not signalled, after every earlier command
        write_timestamp,   // the device's global timestamp (ticks, uint64) into dst
        query_timestamps,  // the kernel timestamps of `queried` into dst (+ offsets)
        launch,            // `kernel` over `groups` work-groups
        launch_indirect,   // `kernels` over the group counts at `indirect_groups` (and `indirect_count`)
        streamer_marker,   // a marker of `streamer` with `marker_value`, new at each run (Streamer::add_marker)
    };
    Kind kind = Kind::barrier;
    void* dst = nullptr;
    const void* src = nullptr;
    size_t size = 0;
    std::vector<uint8_t> pattern;
    hal::EventRef signal;
    std::vector<hal::EventRef> waits;
    hal::EventRef reset_event;
    std::vector<hal::EventRef> queried;
    std::vector<size_t> offsets;                       // empty: packed results
    hal::KernelRef kernel;                             // launch: what it runs, with its arguments and group size
    hal::GroupCount groups{};                          // launch: work-groups per dimension
    std::vector<hal::KernelRef> kernels;               // launch_indirect: what it runs, in order
    const hal::GroupCount* indirect_groups = nullptr;  // launch_indirect: read when it runs
    const uint32_t* indirect_count = nullptr;          // launch_indirect: how many run (null: one kernel)
    std::shared_ptr<metrics::Streamer> streamer;       // streamer_marker: whose reports it marks
    uint32_t marker_value = 0;                         // streamer_marker: the value it carries
};

// The commands of a closed regular list; shared with executions, never changed.
using Recorded = std::shared_ptr<const std::vector<Command>>;

// Checks `command` for `device` as a queue of the device would at submission (operands,
// sizes, events), submitting nothing: the error a queue would answer, or SUCCESS.
ze_result_t check(const Command& command, const hal::Device& device);

// Queues `command` on `queue`. Every kind is a command of the queue (hal/queue.hpp), so
// nothing waits here for the commands before it.
ze_result_t run(const Command& command, hal::Queue& queue);

// Queues the commands of `lists` on `queue` of `device`, all or nothing: every command is
// checked (check()) before the first is queued, so a bad operand queues none. Only a
// failure of the queue itself (a lost device, no memory left) can stop it part-way.
ze_result_t execute(std::span<const Recorded> lists, hal::Queue& queue, const hal::Device& device);

// Every method is thread-safe.
class CommandListObject {
public:
    // An immediate list over `queue`; a synchronous one (ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS)
    // returns from each append once the command completed.
    CommandListObject(ze_context_handle_t context, DeviceObject* device, std::shared_ptr<hal::Queue> queue,
                      bool synchronous);
    // A regular list for engine group `ordinal`.
    CommandListObject(ze_context_handle_t context, DeviceObject* device, uint32_t ordinal);

    // The context it was created in.
    ze_context_handle_t context() const { return context_; }
    DeviceObject* device() const { return device_; }
    bool immediate() const { return queue_ != nullptr; }
    uint32_t ordinal() const { return ordinal_; }
    // The queue an immediate list runs its commands on; null for a regular list.
    const std::shared_ptr<hal::Queue>& queue() const { return queue_; }

    // Immediate: queues the command now, and on a synchronous list waits until the queue
    // has run it. Regular: checks it (check()) and records it; INVALID_ARGUMENT once closed.
    ze_result_t append(Command&& command);
    // Regular lists: no more appends. Immediate lists: nothing to do.
    ze_result_t close();
    // Back to empty and open. Immediate lists: nothing to do; what was appended still runs.
    ze_result_t reset();
    // The commands of a closed regular list into *out; INVALID_ARGUMENT when open.
    ze_result_t recorded(Recorded* out);
    // Immediate lists: waits for every command appended; INVALID_ARGUMENT for regular ones.
    ze_result_t host_synchronize(uint64_t timeout_ns);

private:
    const ze_context_handle_t context_;
    DeviceObject* const device_;
    const std::shared_ptr<hal::Queue> queue_;  // immediate lists only
    const uint32_t ordinal_;
    const bool synchronous_ = false;  // immediate lists only
    std::mutex mu_;
    std::vector<Command> open_;  // while open
    Recorded closed_;            // once closed
};

}  // namespace zehal::ze_driver
