// Counts the commands a sim device's engines are executing, so that memory is never given
// back under a running command once the device is lost: losing the device releases every
// waiter at once, and a caller may then free the memory a copy is still writing.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "hal/host_event.hpp"
#include "hal/host_memory.hpp"

namespace zehal::sim {

// Once its device is lost, a lost user of host memory (hal/host_memory.hpp): host memory of
// every backend is given back only once it is idle.
class CommandGate final : public hal::LostHostMemoryUser {
public:
    // Called by an engine before it looks for a command to run; false (and nothing to
    // leave) once the device is lost: no command starts after that.
    bool enter(const hal::EventDomain& domain) noexcept {
        // seq_cst, as the load of lost below and both accesses of wait_idle's side (the
        // exchange in EventDomain::lose, the load of running_): in their single total order,
        // either this engine sees the device lost, or the waiter sees it running.
        running_.fetch_add(1, std::memory_order_seq_cst);
        if (!domain.lost_seq_cst()) return true;
        leave();
        return false;
    }
    // Called by an engine when the command it ran (or looked for) is over.
    void leave() noexcept {
        // Release: the command's last writes to memory happen before a waiter's unmap.
        running_.fetch_sub(1, std::memory_order_release);
    }
    // Once the device is lost: returns when no engine runs a command (none starts after).
    void wait_idle() const noexcept override {
        // seq_cst: see enter(); also acquire, pairing with leave(), so the command's writes
        // end before the caller unmaps.
        while (running_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
    }

private:
    std::atomic<uint32_t> running_{0};
};

}  // namespace zehal::sim
