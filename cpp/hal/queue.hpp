// Queues: asynchronous immediate command lists bound to one engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "zehal/ze_result.h"
#include "hal/event.hpp"

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
