// Queues: asynchronous immediate command lists bound to one engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "zehal/ze_result.h"
#include "hal/event.hpp"
#include "hal/module.hpp"
#include "hal/queue_checks.hpp"

namespace zehal::hal {

class Device;

// Commands run in submission order on the queue's engine and complete asynchronously.
// Every append is thread-safe. `signal` (may be null) is signalled when the command
// completes; the command starts only after every event of `waits` is signalled.
// Events must come from the queue's device (else INVALID_ARGUMENT).
// Pointers are memory of the queue's device, host memory of any backend, or system memory
// (memory no zehal allocation holds, the caller's to keep alive until the command completes;
// contract §2.2; hal::find_operand); memory of another device, or pages not mapped, are
// INVALID_ARGUMENT; a range past the end of its allocation is INVALID_SIZE;
// overlapping source and destination are OVERLAPPING_REGIONS; size 0 is INVALID_SIZE.
class Queue : private CommandTarget {
public:
    virtual ~Queue() = default;

    // Each command's arguments are checked here, once, for every backend
    // (hal/queue_checks.hpp; DEVICE_LOST first once the device is lost); a backend's do_
    // hook sees only commands that passed, with their operands placed.

    // Copies `size` bytes from `src` to `dst`.
    ze_result_t append_copy(void* dst, const void* src, size_t size, const EventRef& signal,
                            std::span<const EventRef> waits);
    // Fills `size` bytes at `dst` with `pattern` repeated; `pattern_size` a power of two
    // up to 128 (else INVALID_SIZE) dividing `size`.
    ze_result_t append_fill(void* dst, const void* pattern, size_t pattern_size, size_t size, const EventRef& signal,
                            std::span<const EventRef> waits);
    // Completes after every command submitted before it.
    ze_result_t append_barrier(const EventRef& signal, std::span<const EventRef> waits);

    // Commands that touch events and timestamps. Like every command they run in queue
    // order on the device's side, never on the caller's: the append returns at once, even
    // when an earlier command waits for an event that the host signals later.
    //
    // Resets `event` back to not signalled (timestamps cleared) once every command
    // submitted before it completed. INVALID_NULL_HANDLE for a null event.
    ze_result_t append_event_reset(const EventRef& event);
    // Writes the device's global timestamp (the ticks of Device::global_timestamps, a
    // uint64_t) to `dst` once every command before it completed: the time the earlier
    // commands were done. `dst` 8-byte aligned, else INVALID_ARGUMENT.
    ze_result_t append_write_global_timestamp(uint64_t* dst, const EventRef& signal, std::span<const EventRef> waits);
    // Writes the kernel timestamps of each of `events` (one KernelTimestampResult, the
    // first packet; zeros for an event with none) to `dst` + `offsets[i]`, or packed one
    // after the other when `offsets` is null, once every command before it completed. Every
    // operand is checked before anything is queued: INVALID_SIZE for no events or a result
    // past the end of its allocation, INVALID_NULL_HANDLE for a null event,
    // UNSUPPORTED_FEATURE for an event of a pool without a kernel timestamp flag.
    ze_result_t append_query_kernel_timestamps(std::span<const EventRef> events, void* dst, const size_t* offsets,
                                               const EventRef& signal, std::span<const EventRef> waits);
    // Launches `kernel` (a kernel of this queue's device) over `groups` work-groups of
    // its current group size with its current arguments (a snapshot: later set_argument
    // calls do not change this launch). INVALID_ARGUMENT for a kernel of another device, an
    // argument unset, __local memory (static and arguments) over the device's maximum, or a
    // pointer argument that is memory the device may not use (the operand rule above; null
    // is allowed; the memory is held as a copy's operands are); INVALID_GROUP_SIZE_DIMENSION
    // for a zero group count or one over the device's max_group_count. `signal`'s kernel
    // timestamps are the kernel's start and end.
    ze_result_t append_launch(Kernel& kernel, const GroupCount& groups, const EventRef& signal,
                              std::span<const EventRef> waits);
    // Launches `kernels` one after the other, each as append_launch launches it, with group
    // counts read from memory when the command runs, not when it is appended (so a command
    // before it on this queue may write them): kernel i runs over groups[i], and with a
    // `count` only the first min(*count, kernels.size()) kernels run. A group count that
    // reads zero in some dimension runs none of that kernel's work-items. `groups`
    // (kernels.size() GroupCount) and `count` (a uint32_t; may be null for one kernel) are
    // operands the command reads, 4-byte aligned (else INVALID_ARGUMENT). INVALID_SIZE for
    // no kernels, INVALID_NULL_HANDLE for a null kernel, INVALID_NULL_POINTER for null
    // `groups` or, with several kernels, null `count`; each kernel as append_launch checks
    // it. `signal` is signalled once the last kernel
    // completed; its kernel timestamps are the first kernel's start and the last one's end.
    // UNSUPPORTED_FEATURE where the backend cannot read the counts in queue order.
    ze_result_t append_launch_indirect(std::span<const KernelRef> kernels, const GroupCount* groups,
                                       const uint32_t* count, const EventRef& signal, std::span<const EventRef> waits);
    // Waits until every submitted command completed or `timeout_ns` passed
    // (NOT_READY on timeout).
    ze_result_t host_synchronize(uint64_t timeout_ns);
    // Takes back the not yet started command whose signal event is `signal`; the event is
    // then signalled (without timestamps) so that nothing waiting on it hangs. SUCCESS when
    // taken back; NOT_READY when it was not: it started or finished, or the queue cannot
    // take commands back (CUDA streams, Level Zero immediate command lists): wait for its
    // event. INVALID_NULL_HANDLE for a null event, INVALID_ARGUMENT for another device's.
    ze_result_t cancel(const EventRef& signal);

    // Engine group and engine this queue runs on.
    virtual uint32_t ordinal() const = 0;
    virtual uint32_t index() const = 0;

protected:
    // What a backend implements. Every hook runs only after its command's checks passed:
    // pointers are not null, sizes within the rules, operands placed (`to`, `from`; a hold
    // the look-up took stays in the PlacedOperand, released when the hook returns unless
    // the backend took it over), events of this device (the signal) or ones it may wait for.

    // True once the queue's device is lost.
    virtual bool lost() const noexcept = 0;
    // The queue's device: its events, what it waits for and its properties (CommandTarget).
    virtual const Device& device() const noexcept = 0;
    // CommandTarget: this queue's operand look-up (hal::find_operand through the backend's
    // registries, holding the allocation where the backend holds operands), and which
    // kernels are its device's.
    ze_result_t find_operand(const void* p, size_t size, OperandUse use, Operand* out,
                             PointerRegistry::InFlight** held) override = 0;
    bool owns_kernel(const Kernel& kernel) const noexcept override = 0;

    virtual ze_result_t do_append_copy(void* dst, PlacedOperand& to, const void* src, PlacedOperand& from, size_t size,
                                       const EventRef& signal, std::span<const EventRef> waits) = 0;
    virtual ze_result_t do_append_fill(void* dst, PlacedOperand& to, const void* pattern, size_t pattern_size,
                                       size_t size, const EventRef& signal, std::span<const EventRef> waits) = 0;
    virtual ze_result_t do_append_barrier(const EventRef& signal, std::span<const EventRef> waits) = 0;
    virtual ze_result_t do_append_event_reset(const EventRef& event) = 0;
    virtual ze_result_t do_append_write_global_timestamp(uint64_t* dst, PlacedOperand& to, const EventRef& signal,
                                                         std::span<const EventRef> waits) = 0;
    // `placed[i]`: where the result of `events[i]` goes (not held).
    virtual ze_result_t do_append_query_kernel_timestamps(std::span<const EventRef> events, void* dst,
                                                          const size_t* offsets, std::span<const Operand> placed,
                                                          const EventRef& signal, std::span<const EventRef> waits) = 0;
    // `launch`: the kernel's snapshot and its pointer arguments placed (check_launch).
    virtual ze_result_t do_append_launch(Kernel& kernel, const GroupCount& groups, PlacedLaunch& launch,
                                         const EventRef& signal, std::span<const EventRef> waits) = 0;
    // `launch`: the placed group counts, count and each kernel's launch (check_launch_indirect).
    virtual ze_result_t do_append_launch_indirect(std::span<const KernelRef> kernels, const GroupCount* groups,
                                                  const uint32_t* count, PlacedIndirectLaunch& launch,
                                                  const EventRef& signal, std::span<const EventRef> waits) = 0;
    virtual ze_result_t do_host_synchronize(uint64_t timeout_ns) = 0;
    // Takes the command back when the backend can. This default is a queue that cannot:
    // every command counts as started (NOT_READY).
    virtual ze_result_t do_cancel(const EventRef& signal);

private:
    // CommandTarget, answered by device().
    bool waits_for_event(const Event& event) const noexcept final;
    bool signals_event(const Event& event) const noexcept final;
    const DeviceProperties& properties() const noexcept final;
};

}  // namespace zehal::hal
