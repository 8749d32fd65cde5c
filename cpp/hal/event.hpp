// Events and event pools: host-visible completion flags that commands signal.
#pragma once

#include <cstdint>
#include <memory>

#include "zehal/ze_result.h"
#include "hal/types.hpp"

namespace zehal::hal {

class EventPool;

// One event of a pool. Signalled by a command or the host; waited on by the host or
// by other commands. Every method is thread-safe.
class Event {
public:
    virtual ~Event() = default;

    // SUCCESS once signalled, NOT_READY before.
    virtual ze_result_t query() = 0;
    // Waits until signalled or `timeout_ns` passed (kWaitForever: no limit; 0: a query).
    // SUCCESS, NOT_READY on timeout, DEVICE_LOST if the device was lost.
    virtual ze_result_t host_synchronize(uint64_t timeout_ns) = 0;
    // Signals from the host, waking waiters.
    virtual ze_result_t host_signal() = 0;
    // Back to not signalled; timestamps are cleared.
    virtual ze_result_t host_reset() = 0;
    // Kernel timestamps in device ticks (contract §3): *count 0 asks the packet count;
    // a smaller count gets the first packets; a larger one is corrected. NOT_READY,
    // `out` untouched, before the event is signalled; UNSUPPORTED_FEATURE when the pool
    // has no timestamp flag.
    virtual ze_result_t query_kernel_timestamps(uint32_t* count, KernelTimestampResult* out) = 0;
    // The same in host ns of CLOCK_MONOTONIC_RAW; needs a KERNEL_MAPPED_TIMESTAMP pool.
    virtual ze_result_t query_synchronized_timestamps(uint32_t* count, KernelTimestampResult* out) = 0;
    // The pool this event belongs to.
    virtual EventPool& pool() = 0;
};

using EventRef = std::shared_ptr<Event>;

// A fixed number of events created together with shared flags.
class EventPool {
public:
    virtual ~EventPool() = default;
    // Number of events.
    virtual uint32_t count() const = 0;
    // EventPoolFlag bits it was created with.
    virtual uint32_t flags() const = 0;
    // Event `index`; INVALID_ARGUMENT when index >= count(). The event keeps the pool alive.
    virtual ze_result_t event(uint32_t index, EventRef* out) = 0;
    // The file another process opens to share this pool's events (a pool made with kPoolIpc
    // on a device that shares pools): its fd, which stays the pool's, and its size.
    // UNSUPPORTED_FEATURE for a pool whose events live in no such file.
    virtual ze_result_t ipc_file(int* fd, uint64_t* bytes) {
        static_cast<void>(fd);
        static_cast<void>(bytes);
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
};

}  // namespace zehal::hal
