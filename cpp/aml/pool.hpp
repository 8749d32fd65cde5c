// The allocator behind pooled areas (contract §10): memory taken from an upstream area in
// large chunks and handed out again without a driver call.
//
// Two paths. Sizes up to kMaxClassBytes are served by size classes: the smallest block m
// times 1, 2, 3, 4, 6, 8, 12, ... (powers of two and their halfway points, so a block wastes
// at most a third of itself; every class is a multiple of m, so of the alignment). Threads
// are spread over kShards shards, each with a bin per class (slabs, runs of equal blocks
// carved from a chunk, and their free blocks) and its counters under one spin lock, so
// threads do not meet on the fast path and no lock is global. A block freed by another
// thread goes back to its slab's shard. Larger sizes are carved first-fit from the chunks by
// the arena, whose free ranges coalesce with their neighbours on free. Slabs come from the
// arena too, so trim() can give whole chunks back once nothing in them is used.
//
// The peak costs no counter every thread writes: each shard may hold up to its cap of bytes
// in use, and the caps add up to at most the peak, so while every shard stays under its cap
// no new peak can occur. A shard that would pass its cap takes the slow path (peak_mu_ and
// the lock of every shard holding a cap): caps left unused by other shards move to it, and
// only when none are left does the peak rise, to the exact sum. Threads that keep taking caps
// from each other (many threads cycling at once, so that each needs back what another just
// took) would pay the slow path on most calls; a shard robbed before each of its last
// kRobbedStreak slow paths keeps what it needs by raising the peak instead. The peak is then
// an upper bound: caps never exceed what their shard has held, so it is at most the sum of
// each shard's own highest use.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "zehal/ze_result.h"
#include "common/cache_line_allocator.hpp"
#include "common/spin_lock.hpp"

namespace zehal::aml {

class Area;

// What a pool holds and has done, every field of the instant it is read; all exact but the
// peak under contention (see the top of this file).
struct PoolStats {
    uint64_t bytes_in_use = 0;          // bytes asked for by the live mappings
    uint64_t peak_bytes_in_use = 0;     // the most bytes_in_use has been, or an upper bound
    uint64_t bytes_reserved = 0;        // bytes held from upstream
    uint64_t allocations = 0;           // live mappings
    uint64_t total_allocations = 0;     // mappings ever made
    uint64_t upstream_allocations = 0;  // chunks ever taken from upstream
    uint64_t cache_hits = 0;            // mappings served from a class's free list
};

class Pool {
public:
    // Sizes above this go to the arena; below, to a size class.
    static constexpr size_t kMaxClassBytes = 1u << 20;
    // Smallest chunk taken from upstream (later chunks grow with what is reserved).
    static constexpr size_t kMinChunkBytes = 2u << 20;
    // Largest chunk taken for the pool's own growth (a larger mapping takes its own size).
    static constexpr size_t kMaxChunkBytes = 64u << 20;

    // A pool over `upstream` (its kind and alignment are the pool's) that never holds more
    // than `maximum_bytes` (0: no limit).
    Pool(std::shared_ptr<Area> upstream, size_t maximum_bytes);
    // Gives every chunk back to upstream.
    ~Pool();
    Pool(const Pool&) = delete;
    Pool& operator=(const Pool&) = delete;

    // Takes one chunk of `bytes` from upstream now (the pool's initial size).
    ze_result_t reserve(size_t bytes);
    // A block of at least `size` (> 0) bytes. OUT_OF_HOST_MEMORY (or the upstream's out of
    // memory code) when the maximum or upstream refuses; nothing changes then.
    ze_result_t allocate(size_t size, void** out);
    // Gives back the block at `ptr`; `size` is what was asked for it, or 0 when unknown.
    // INVALID_ARGUMENT for a pointer the pool did not hand out, or handed out and got back.
    ze_result_t deallocate(void* ptr, size_t size);
    // True when `ptr` is a live block; the size asked for it into *size.
    bool find(const void* ptr, size_t* size) const;
    // Gives back to upstream every chunk nothing is carved from (free slabs first).
    ze_result_t trim();
    PoolStats stats() const;
    const Area& upstream() const noexcept { return *upstream_; }

private:
    // Blocks of one slab at most.
    static constexpr size_t kSlabBlocks = 64;
    // A run of equal blocks of one class, carved from a chunk. Written by its shard's threads
    // on every mapping: on cache lines of its own.
    struct alignas(kCacheLineBytes) Slab {
        char* base = nullptr;
        uint32_t blocks = 0;
        uint32_t in_use = 0;
        std::array<size_t, kSlabBlocks> asked{};  // per block: the size asked for, 0 when free
    };
    // One class within a shard: its slabs by base address and their free blocks (on cache
    // lines of their own, for the same reason).
    struct Bin {
        std::vector<std::unique_ptr<Slab>> slabs;
        std::vector<std::pair<char*, Slab*>, CacheLineAllocator<std::pair<char*, Slab*>>> free;
    };
    // Room for every class: at most 24 (m = 256 bytes up to kMaxClassBytes).
    static constexpr size_t kClasses = 32;
    static constexpr size_t kShards = 32;
    // Slow paths in a row, each after a loss of cap, after which a shard stops taking caps
    // from others (see the top of this file).
    static constexpr uint32_t kRobbedStreak = 4;
    // The size classes, bytes in use and counters of the threads that use one shard (large
    // mappings count in the shard of the thread that made them), guarded by mu. Aligned so
    // that two never share a cache line.
    struct alignas(kCacheLineBytes) Shard {
        mutable SpinLock mu;
        uint64_t bytes_in_use = 0;
        uint64_t cap = 0;  // bytes_in_use stays at most this; changed on the slow path only
        uint64_t allocations = 0;
        uint64_t total_allocations = 0;
        uint64_t cache_hits = 0;
        bool robbed = false;         // cap taken by another shard since this one's last slow path, guarded by peak_mu_
        uint32_t robbed_streak = 0;  // this shard's last slow paths that followed a loss, guarded by peak_mu_
        std::array<Bin, kClasses> bins;
    };
    // A live large block: the size asked for it and the shard it counts in.
    struct LargeBlock {
        size_t size = 0;
        size_t shard = 0;
    };
    // A chunk of upstream memory and its free ranges (offset -> length), coalesced.
    struct Chunk {
        char* base = nullptr;
        size_t bytes = 0;
        size_t used = 0;
        std::map<size_t, size_t> free;
    };

    size_t class_of(size_t size) const noexcept;
    ze_result_t allocate_small(size_t cls, size_t size, void** out);
    ze_result_t allocate_large(size_t size, void** out);
    // With the shard's lock held: a block of class `cls` for `size` bytes, growing the bin
    // when it has none free; the counters follow.
    ze_result_t take_small(Shard& shard, size_t cls, size_t size, void** out);
    // With the shard's lock held: `size` bytes carved by the arena, counted in `shard`.
    ze_result_t take_large(Shard& shard, size_t size, void** out);
    // The slow path: runs `take` (which adds to `shard`) with every capped shard locked,
    // then moves unused caps to `shard`, raising the peak when there are too few.
    template <typename Take>
    ze_result_t take_over_cap(Shard& shard, Take take);
    // Frees `p` if it is a live block of a class in [first, last) in `shard` (its lock taken
    // here); INVALID_ARGUMENT if not.
    ze_result_t free_in(Shard& shard, size_t first, size_t last, char* p);
    ze_result_t deallocate_large(char* p);
    // Adds a slab to `bin` (its shard's lock held); the arena's error when it cannot give one.
    ze_result_t grow(Bin& bin, size_t block);
    // Arena, arena_mu_ held: `bytes` (a multiple of the alignment) carved first-fit, taking
    // a new chunk from upstream when none has room.
    ze_result_t carve(size_t bytes, char** out);
    void uncarve(char* p, size_t bytes);
    // Takes a chunk from upstream: `at_least` bytes, or more as the pool grows (unless
    // `exact`), within the maximum (arena_mu_ held).
    ze_result_t new_chunk(size_t at_least, bool exact);
    Chunk* chunk_of(const char* p);

    const std::shared_ptr<Area> upstream_;
    const size_t alignment_;
    const size_t min_block_;
    const size_t maximum_;
    std::array<size_t, kClasses> class_bytes_{};  // block size of each class, the first classes_ in use
    size_t classes_ = 0;
    std::array<Shard, kShards> shards_;

    // Lock order: peak_mu_, then shards by index, then arena_mu_.
    mutable std::mutex peak_mu_;
    uint64_t peak_ = 0;      // the most bytes in use has been, guarded by peak_mu_
    uint64_t assigned_ = 0;  // the sum of every shard's cap (at most peak_), guarded by peak_mu_
    uint32_t capped_ = 0;    // bit i: shard i has a cap, guarded by peak_mu_
    static_assert(kShards <= 32, "capped_ has a bit per shard");

    mutable std::mutex arena_mu_;
    std::vector<std::unique_ptr<Chunk>> chunks_;  // sorted by base, guarded by arena_mu_
    std::map<char*, LargeBlock> large_blocks_;    // guarded by arena_mu_
    uint64_t reserved_ = 0;                       // guarded by arena_mu_
    uint64_t upstream_allocations_ = 0;           // guarded by arena_mu_

    // Times upstream refused a chunk (allocate() then trims and retries once).
    std::atomic<uint64_t> upstream_refusals_{0};
};

}  // namespace zehal::aml
