// The state of one host event, laid out so that it may live in memory of one process (a
// private pool) or in a file that several processes map (an IPC pool): its signal word and
// the kernel timestamps of its last signal, behind a lock that a process dying while it
// holds it does not leave locked.
#pragma once

#include <pthread.h>

#include <cstddef>
#include <cstdint>

#include "common/wait_word.hpp"
#include "hal/timestamps.hpp"
#include "hal/types.hpp"

namespace zehal::hal {

// A mutex that is either private to the process or shared by the processes mapping it
// (process-shared and robust: a holder that dies hands it on to the next locker).
class SlotMutex {
public:
    // Initialises the mutex in place; `shared` for memory that processes share.
    void init(bool shared) noexcept;
    // Destroys a private mutex (a shared one may still be used by another process: left).
    void destroy() noexcept;
    void lock() noexcept;
    void unlock() noexcept { pthread_mutex_unlock(&mu_); }

private:
    pthread_mutex_t mu_;
};

// One event's state. Constructed in place by the pool that owns the memory (the exporter's
// for a shared file); processes that map the file later use it as they find it.
struct EventSlot {
    static constexpr uint32_t kSignalled = 1u << 0;
    static constexpr uint32_t kLost = 1u << 1;  // the owning device was lost

    // `shared` for a slot in a file processes share: its word wakes every process's waiters.
    explicit EventSlot(bool shared) noexcept : state(0, shared ? WaitScope::shared : WaitScope::process) {
        mu.init(shared);
    }

    WaitWord state;        // kSignalled | kLost
    SlotMutex mu;          // the fields below and the packets after the slot
    uint32_t packets = 0;  // packets recorded by the last signal
    TimestampReference ref{};

    // The packets (the pool's packet capacity of them) that follow the slot in memory.
    KernelTimestampResult* ticks() noexcept { return reinterpret_cast<KernelTimestampResult*>(this + 1); }
};

static_assert(sizeof(EventSlot) % alignof(KernelTimestampResult) == 0, "packets follow a slot aligned");

// Bytes from one slot to the next in a pool whose slots hold `packets` packets each.
constexpr size_t event_slot_stride(uint32_t packets) noexcept {
    const size_t bytes = sizeof(EventSlot) + size_t{packets} * sizeof(KernelTimestampResult);
    return (bytes + alignof(EventSlot) - 1) / alignof(EventSlot) * alignof(EventSlot);
}

}  // namespace zehal::hal
