// A 32-bit word threads wait on: a brief spin, then a futex sleep with a deadline.
#pragma once

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <ctime>

#include "common/clock.hpp"

namespace zehal {

// One pause of a spin loop: tells the core this is a spin, yields the pipeline to its twin.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// How long a waiter spins before it sleeps: long enough to catch a short command
// (a 64-byte copy completes in well under this), short enough not to burn a core.
inline constexpr uint64_t kDefaultSpinNs = 20'000;
// Of which the first part spins on the pause instruction only (then it also yields).
inline constexpr uint64_t kPauseSpinNs = 2'000;

// Who may wait on a WaitWord: threads of this process only, or of every process that maps
// the memory holding it (a word in a shared file: the futex is then keyed by the file's page).
enum class WaitScope : uint32_t { process = 0, shared = 1 };

// A value plus a futex. Writers change the value and wake sleepers; waiters wait until the
// value differs from the one they saw. Wakes cost a system call only when someone sleeps
// (a sleeper of another process counts too: the count lies beside the value).
class WaitWord {
public:
    explicit WaitWord(uint32_t initial = 0, WaitScope scope = WaitScope::process) noexcept
        : value_(initial),
          private_flag_(scope == WaitScope::process ? FUTEX_PRIVATE_FLAG : 0) {}
    WaitWord(const WaitWord&) = delete;
    WaitWord& operator=(const WaitWord&) = delete;

    // The current value; acquire (by default) so that what the writer published before
    // changing the word is visible to a reader that sees the change.
    uint32_t load(std::memory_order order = std::memory_order_acquire) const noexcept { return value_.load(order); }

    // Sets the value and wakes every sleeper. seq_cst store, then seq_cst load of the sleeper
    // count: with the waiter's seq_cst increment-then-load this is Dekker's pattern, so
    // either the waiter sees the new value or this call sees the waiter and wakes it.
    void store(uint32_t v) noexcept {
        value_.store(v, std::memory_order_seq_cst);
        wake_sleepers();
    }
    // Adds `d`, wakes every sleeper, returns the previous value (seq_cst: see store()).
    uint32_t fetch_add(uint32_t d) noexcept {
        const uint32_t old = value_.fetch_add(d, std::memory_order_seq_cst);
        wake_sleepers();
        return old;
    }
    // Sets bits, wakes every sleeper, returns the previous value (seq_cst: see store()).
    uint32_t fetch_or(uint32_t bits) noexcept {
        const uint32_t old = value_.fetch_or(bits, std::memory_order_seq_cst);
        wake_sleepers();
        return old;
    }
    // Clears bits without waking anyone (nobody waits for a word to go back); release so
    // that a later acquire load that sees the cleared bits sees what came before.
    uint32_t fetch_and(uint32_t bits) noexcept { return value_.fetch_and(bits, std::memory_order_acq_rel); }

    // Waits while the value equals `seen`, until `deadline_ns` (host ns of
    // CLOCK_MONOTONIC_RAW; kWaitForever: no limit). Spins for `spin_ns` first. Returns true
    // when the value changed (or a wake came: callers re-check), false at the deadline.
    bool wait(uint32_t seen, uint64_t deadline_ns, uint64_t spin_ns = kDefaultSpinNs) const noexcept {
        if (load() != seen) return true;
        if (spin_ns) {
            // Pause-spin for the first µs or so, then yield between looks: on a busy machine
            // the thread that will change the word may need this core to run at all.
            const uint64_t start = host_now_ns();
            const uint64_t spin_end = start + spin_ns;
            const uint64_t yield_from = start + std::min<uint64_t>(spin_ns, kPauseSpinNs);
            for (uint32_t i = 1;; ++i) {
                cpu_relax();
                if (load() != seen) return true;
                if ((i & 15) == 0) {
                    const uint64_t now = host_now_ns();
                    if (now >= deadline_ns) return false;
                    if (now >= spin_end) break;
                    if (now >= yield_from) sched_yield();
                }
            }
        }
        return sleep(seen, deadline_ns);
    }

    // Sleeps (no spin) while the value equals `seen`, until `deadline_ns`; as wait().
    bool sleep(uint32_t seen, uint64_t deadline_ns) const noexcept {
        // seq_cst increment then seq_cst load: the waiter half of the pattern in store().
        sleepers_.fetch_add(1, std::memory_order_seq_cst);
        bool changed = true;
        if (value_.load(std::memory_order_seq_cst) == seen) {
            timespec rel{};
            timespec* timeout = nullptr;
            if (deadline_ns != kWaitForever) {
                const uint64_t now = host_now_ns();
                if (now >= deadline_ns) {
                    changed = false;
                } else {
                    const uint64_t left = deadline_ns - now;
                    rel.tv_sec = static_cast<time_t>(left / 1'000'000'000u);
                    rel.tv_nsec = static_cast<long>(left % 1'000'000'000u);
                    timeout = &rel;
                }
            }
            if (changed) {
                // The kernel compares the word with `seen` atomically before sleeping, so a
                // change made after our load is never missed.
                syscall(SYS_futex, const_cast<std::atomic<uint32_t>*>(&value_), FUTEX_WAIT | private_flag_, seen,
                        timeout, nullptr, 0);
                changed = load() != seen || host_now_ns() < deadline_ns;
            }
        }
        // Relaxed: the count only decides whether a waker makes a system call.
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        return changed;
    }

private:
    void wake_sleepers() noexcept {
        if (sleepers_.load(std::memory_order_seq_cst) == 0) return;
        syscall(SYS_futex, &value_, FUTEX_WAKE | private_flag_, INT_MAX, nullptr, nullptr, 0);
    }

    static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
                  "futex needs a plain 32-bit word");
    std::atomic<uint32_t> value_;
    mutable std::atomic<uint32_t> sleepers_{0};
    const int private_flag_;  // FUTEX_PRIVATE_FLAG, or 0 for a word processes share
};

// Waits until `done()` is true: re-checks after every change of `word`, sleeping between
// (see WaitWord::wait). Returns true when done, false at the deadline.
template <typename Done>
bool wait_until(const WaitWord& word, Done&& done, uint64_t deadline_ns, uint64_t spin_ns = kDefaultSpinNs) {
    for (;;) {
        const uint32_t seen = word.load();
        if (done()) return true;
        if (!word.wait(seen, deadline_ns, spin_ns)) return done();
        spin_ns = 0;  // spun once already: later rounds sleep at once
    }
}

// The deadline `timeout_ns` from now (kWaitForever stays forever; no overflow).
inline uint64_t deadline_after(uint64_t timeout_ns) noexcept {
    if (timeout_ns == kWaitForever) return kWaitForever;
    const uint64_t now = host_now_ns();
    return timeout_ns > kWaitForever - now ? kWaitForever - 1 : now + timeout_ns;
}

}  // namespace zehal
