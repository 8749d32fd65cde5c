// The allocations a device (or a backend's host memory) made, found by any pointer into them.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "zehal/ze_result.h"
#include "common/shared_spin_lock.hpp"
#include "hal/types.hpp"

namespace zehal::hal {

// One allocation: what pointer_info reports, plus what the backend needs to release it.
struct Allocation {
    PointerInfo info;          // kind, base, size, alignment, imported
    void* mapping = nullptr;   // what the backend releases (may start before info.base)
    size_t mapping_bytes = 0;  // its length
    uint64_t tag = 0;          // the backend's own datum
    int export_fd = -1;        // the backend's fd of exportable memory (closed with the memory); -1: none
};

// Thread-safe map from address ranges to allocations. Lookups take a shared lock (one
// atomic add and subtract), so many submitting threads validate pointers at once; a
// look-up in an empty registry (a device's virtual memory, mostly) only reads a count.
//
// Each allocation counts the commands in flight on it (hold_range, release): remove() waits
// until none is left, so memory is never given back under a queued or running command.
class PointerRegistry {
public:
    // The count of commands in flight on one allocation (bit 31: a remove() waits for it).
    using InFlight = std::atomic<uint32_t>;

    // Adds `a`. Nothing is added on INVALID_ARGUMENT (an empty allocation or one that
    // overlaps an allocation already registered) or OUT_OF_HOST_MEMORY (the table cannot grow).
    ze_result_t insert(const Allocation& a) noexcept;
    // Removes the allocation that starts at `base` into *out; false when none starts there
    // (a foreign pointer, an interior pointer, or one already removed). Once removed (no
    // look-up finds it), waits until no command holds it (see hold_range), holding no lock.
    bool remove(const void* base, Allocation* out);
    // The allocation holding `p` (interior pointers too) into *out; false when none.
    bool find(const void* p, Allocation* out) const;
    // Checks that [p, p + size) lies in one allocation: SUCCESS (with *out), INVALID_ARGUMENT
    // when no allocation holds p, INVALID_SIZE when the range runs past its end.
    ze_result_t find_range(const void* p, size_t size, Allocation* out) const;
    // As find_range, and on SUCCESS counts one more command in flight on the allocation:
    // *held names the count, to be given to release() exactly once, when the command no
    // longer touches the memory (run, cancelled or dropped). Until then remove() of the
    // allocation waits. One atomic increment; no lock beyond find_range's.
    ze_result_t hold_range(const void* p, size_t size, Allocation* out, InFlight** held) const;
    // Ends a hold of hold_range (nullptr: nothing). The command's accesses to the memory
    // happen before the remove() that waited for it returns.
    static void release(InFlight* held) noexcept;
    // Returns once no command holds the allocation starting at `base` (at once when none
    // starts there), leaving it registered: new holds may start at once. Callers waiting on
    // one allocation take turns (one waits at a time), and none removes it meanwhile.
    void wait_unheld(const void* base) const;
    // Commands in flight on the allocation holding `p` (0 when none holds p; for tests).
    uint32_t in_flight(const void* p) const;
    // Number of allocations (no lock taken).
    size_t count() const noexcept;
    // True when no allocation is registered (no lock taken).
    bool empty() const noexcept;
    // How many allocations were removed so far. Acquire: read before a look-up, it tells
    // whether an allocation found by that look-up may have been removed since (a cached
    // result stays valid while it is unchanged; an insert never overlaps what was found).
    uint64_t removals() const noexcept { return removals_.load(std::memory_order_acquire); }
    // Removes and returns every allocation (for a device that goes away), waiting for no
    // hold: the caller has stopped whatever ran commands on them.
    std::vector<Allocation> take_all();
    // As take_all, then waits until no command holds any of them (commands of other devices,
    // which peers' memory is an operand of, may still run: contract §2.2).
    std::vector<Allocation> take_all_unused();

private:
    // An allocation and its count of commands in flight; a node of by_base_, so the count
    // stays where it is while the allocation is registered (and while remove() waits).
    struct Entry : Allocation {
        Entry(const Allocation& a) : Allocation(a) {}  // NOLINT(google-explicit-constructor): emplace
        mutable InFlight in_flight{0};
    };

    // Caller holds mu_ (either mode). The entry whose range holds `addr`, or end().
    std::map<uintptr_t, Entry>::const_iterator holding(uintptr_t addr) const;

    mutable SharedSpinLock mu_;
    std::map<uintptr_t, Entry> by_base_;
    std::atomic<uint64_t> removals_{0};  // written under mu_ (exclusive)
    std::atomic<size_t> size_{0};        // by_base_.size(), written under mu_ (exclusive)
};

}  // namespace zehal::hal
