// A reader-writer lock for look-ups of a few dozen instructions that many threads make at
// once and that change rarely (the pointer registries, the handle tables): a reader enters
// with one atomic add and leaves with one atomic subtract, where pthread_rwlock costs about
// a hundred instructions per pair. A writer takes the writer bit, then waits for the readers
// inside to leave; readers that find the bit set step back until it clears, so a writer is
// never starved. Waits spin, then yield the core, as SpinLock's do. Meets SharedLockable, so
// std::shared_lock and std::unique_lock take it.
#pragma once

#include <atomic>
#include <cstdint>
#include <thread>

#include "common/wait_word.hpp"

namespace zehal {

class SharedSpinLock {
public:
    void lock_shared() noexcept {
        for (unsigned spins = 0;;) {
            // Acquire: with no writer inside, the reader sees what the last writer wrote
            // before its release in unlock().
            if (!(state_.fetch_add(1, std::memory_order_acquire) & kWriter)) return;
            // Relaxed: stepping back only undoes the count; nothing was read.
            state_.fetch_sub(1, std::memory_order_relaxed);
            // Relaxed: a read-only wait for the writer to leave, then retry.
            while (state_.load(std::memory_order_relaxed) & kWriter) pause(++spins);
        }
    }
    void unlock_shared() noexcept {
        // Release: the reader's reads happen before a writer that waits for the count.
        state_.fetch_sub(1, std::memory_order_release);
    }
    void lock() noexcept {
        for (unsigned spins = 0;;) {
            uint32_t s = state_.load(std::memory_order_relaxed);
            // Acquire: the writer sees what the previous writer wrote.
            if (!(s & kWriter) && state_.compare_exchange_weak(s, s | kWriter, std::memory_order_acquire)) break;
            pause(++spins);
        }
        // Acquire: pairs with unlock_shared's release, so the readers that were inside are done.
        for (unsigned spins = 0; state_.load(std::memory_order_acquire) & ~kWriter;) pause(++spins);
    }
    void unlock() noexcept {
        // Release: the writer's writes are seen by every later reader and writer.
        state_.fetch_and(~kWriter, std::memory_order_release);
    }

private:
    static constexpr uint32_t kWriter = 1u << 31;  // the other bits count readers inside

    static void pause(unsigned spins) noexcept {
        if (spins % 64 == 0)
            std::this_thread::yield();
        else
            cpu_relax();
    }

    std::atomic<uint32_t> state_{0};
};

}  // namespace zehal
