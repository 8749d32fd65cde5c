// Queues: asynchronous immediate command lists bound to one engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "zehal/ze_result.h"
#include "hal/event.hpp"
#include "hal/module.hpp"

namespace zehal::hal {

// Commands run in submission order on the queue's engine and complete asynchronously.
// Every append is thread-safe. `signal` (may be null) is signalled when the command
// completes; the command starts only after every event of `waits` is signalled.
// Events must come from the queue's device (else INVALID_ARGUMENT).
// Pointers are memory of the queue's device, host memory of any backend, or system memory
// (memory no zehal allocation holds, the caller's to keep alive until the command completes;
// contract §2.2; hal::find_operand); memory of another device, or pages not mapped, are
// INVALID_ARGUMENT; a range past the end of its allocation is INVALID_SIZE;
// overlapping source and destination are OVERLAPPING_REGIONS; size 0 is INVALID_SIZE.
class Queue {
public:
    virtual ~Queue() = default;

    // Copies `size` bytes from `src` to `dst`.
    virtual ze_result_t append_copy(void* dst, const void* src, size_t size, const EventRef& signal,
                                    std::span<const EventRef> waits) = 0;
    // Fills `size` bytes at `dst` with `pattern` repeated; `pattern_size` a power of two
    // up to 128 (else INVALID_SIZE) dividing `size`.
    virtual ze_result_t append_fill(void* dst, const void* pattern, size_t pattern_size, size_t size,
                                    const EventRef& signal, std::span<const EventRef> waits) = 0;
    // Completes after every command submitted before it.
    virtual ze_result_t append_barrier(const EventRef& signal, std::span<const EventRef> waits) = 0;

    // Commands that touch events and timestamps. Like every command they run in queue
    // order on the device's side, never on the caller's: the append returns at once, even
    // when an earlier command waits for an event that the host signals later.
    //
    // Resets `event` back to not signalled (timestamps cleared) once every command
    // submitted before it completed. INVALID_NULL_HANDLE for a null event.
    virtual ze_result_t append_event_reset(const EventRef& event) = 0;
    // Writes the device's global timestamp (the ticks of Device::global_timestamps, a
    // uint64_t) to `dst` once every command before it completed: the time the earlier
    // commands were done. `dst` 8-byte aligned, else INVALID_ARGUMENT.
    virtual ze_result_t append_write_global_timestamp(uint64_t* dst, const EventRef& signal,
                                                      std::span<const EventRef> waits) = 0;
    // Writes the kernel timestamps of each of `events` (one KernelTimestampResult, the
    // first packet; zeros for an event with none) to `dst` + `offsets[i]`, or packed one
    // after the other when `offsets` is null, once every command before it completed. Every
    // operand is checked before anything is queued: INVALID_SIZE for no events or a result
    // past the end of its allocation, INVALID_NULL_HANDLE for a null event,
    // UNSUPPORTED_FEATURE for an event of a pool without a kernel timestamp flag.
    virtual ze_result_t append_query_kernel_timestamps(std::span<const EventRef> events, void* dst,
                                                       const size_t* offsets, const EventRef& signal,
                                                       std::span<const EventRef> waits) = 0;
    // Launches `kernel` (a kernel of this queue's device) over `groups` work-groups of
    // its current group size with its current arguments (a snapshot: later set_argument
    // calls do not change this launch). INVALID_ARGUMENT for a kernel of another device, an
    // argument unset, __local memory (static and arguments) over the device's maximum, or a
    // pointer argument that is memory the device may not use (the operand rule above; null
    // is allowed; the memory is held as a copy's operands are); INVALID_GROUP_SIZE_DIMENSION
    // for a zero group count or one over the device's max_group_count. `signal`'s kernel
    // timestamps are the kernel's start and end.
    virtual ze_result_t append_launch(Kernel& kernel, const GroupCount& groups, const EventRef& signal,
                                      std::span<const EventRef> waits) = 0;
    // Waits until every submitted command completed or `timeout_ns` passed
    // (NOT_READY on timeout).
    virtual ze_result_t host_synchronize(uint64_t timeout_ns) = 0;
    // Removes the not yet started command whose signal event is `signal`; the event is
    // then signalled (without timestamps) so that nothing waiting on it hangs.
    // SUCCESS when removed; NOT_READY when it already started or finished (wait for it);
    // UNSUPPORTED_FEATURE when the backend cannot take commands back.
    virtual ze_result_t cancel(const EventRef& signal) = 0;

    // Engine group and engine this queue runs on.
    virtual uint32_t ordinal() const = 0;
    virtual uint32_t index() const = 0;
};

}  // namespace zehal::hal
