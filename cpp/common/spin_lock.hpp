// A lock for critical sections of a few dozen instructions (a free-list pop): spins
// (test-and-test-and-set) instead of sleeping in the kernel, and yields the core after a
// while so that a preempted holder can run.
#pragma once

#include <atomic>
#include <thread>

#include "common/wait_word.hpp"

namespace zehal {

class SpinLock {
public:
    void lock() noexcept {
        for (unsigned spins = 0;; ++spins) {
            // Acquire: the critical section's reads see the last holder's writes.
            if (!locked_.exchange(true, std::memory_order_acquire)) return;
            // Relaxed: a read-only wait for the line to change, then retry the exchange.
            while (locked_.load(std::memory_order_relaxed)) {
                if (++spins % 64 == 0)
                    std::this_thread::yield();
                else
                    cpu_relax();
            }
        }
    }
    bool try_lock() noexcept {
        // Acquire: as lock().
        return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
    }
    void unlock() noexcept {
        // Release: the critical section's writes are seen by the next holder.
        locked_.store(false, std::memory_order_release);
    }

private:
    std::atomic<bool> locked_{false};
};

}  // namespace zehal
