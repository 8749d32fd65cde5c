// A lock-free single-producer single-consumer byte ring with batched commits.
//
// One thread writes (reserve → fill → commit), one thread reads (peek → use → release).
// Capacity is a power of two, so positions are free-running 64-bit counters masked into
// the buffer (they never wrap in practice). The producer's and the consumer's index sit
// on their own cache lines, each beside that side's cached copy of the other's index, so
// in the common case a side touches only its own line. The hot path is plain loads and
// stores with acquire/release ordering: no read-modify-write, no lock.
// The object is aligned to the cache line, so nothing else shares the consumer's line.
//
// Batching is what makes it fast: reserve and peek hand out up to all free or readable
// space as (at most) two contiguous spans, and one commit or release publishes any number
// of bytes with a single store.
#pragma once

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>

#include "common/cache_line_allocator.hpp"

namespace zehal {

// A region of the ring: `first` then `second` (empty unless the region wraps).
struct RingRegions {
    std::span<std::byte> first;
    std::span<std::byte> second;
    // Bytes in both spans.
    [[nodiscard]] size_t size() const noexcept { return first.size() + second.size(); }
};

class SpscByteRing {
public:
    // Cache line size used to keep the two sides apart (common/cache_line_allocator.hpp).
    static constexpr size_t kCacheLine = kCacheLineBytes;

    // A ring of `capacity` bytes rounded up to a power of two (at least kCacheLine).
    explicit SpscByteRing(size_t capacity)
        : capacity_(std::bit_ceil(std::max(capacity, kCacheLine))),
          mask_(capacity_ - 1),
          data_(static_cast<std::byte*>(::operator new (capacity_, std::align_val_t{kCacheLine}))) {}

    SpscByteRing(const SpscByteRing&) = delete;
    SpscByteRing& operator=(const SpscByteRing&) = delete;

    // Bytes the ring holds when full.
    [[nodiscard]] size_t capacity() const noexcept { return capacity_; }

    // --- producer side (one thread) ---

    // Free space as up to two spans, at least `min_bytes` in total when possible (the
    // cached read index is refreshed only when it shows less). Fill a prefix, then commit.
    [[nodiscard]] RingRegions reserve(size_t min_bytes = 1) noexcept {
        // Relaxed: only this thread stores write_.
        const uint64_t w = write_.load(std::memory_order_relaxed);
        if (capacity_ - (w - read_cache_) < min_bytes) {
            // Acquire: pairs with the consumer's release in release(), so its reads of the
            // bytes it freed happen before we overwrite them.
            read_cache_ = read_.load(std::memory_order_acquire);
        }
        return regions(w, capacity_ - (w - read_cache_));
    }

    // Publishes the first `bytes` of the last reservation (bytes <= its size).
    void commit(size_t bytes) noexcept {
        // Relaxed: only this thread stores write_.
        const uint64_t w = write_.load(std::memory_order_relaxed);
        // Release: the bytes written into the reservation become visible to the consumer
        // before the index that covers them (pairs with the acquire in peek()).
        write_.store(w + bytes, std::memory_order_release);
    }

    // Copies all `bytes` of `src` in and commits, or nothing when they do not fit.
    [[nodiscard]] bool try_push(const void* src, size_t bytes) noexcept {
        RingRegions r = reserve(bytes);
        if (r.size() < bytes) return false;
        copy_in(r, src, bytes);
        commit(bytes);
        return true;
    }

    // --- consumer side (one thread) ---

    // Readable bytes as up to two spans, at least `min_bytes` in total when available
    // (the cached write index is refreshed only when it shows less). Use, then release.
    [[nodiscard]] RingRegions peek(size_t min_bytes = 1) noexcept {
        // Relaxed: only this thread stores read_.
        const uint64_t r = read_.load(std::memory_order_relaxed);
        if (write_cache_ - r < min_bytes) {
            // Acquire: pairs with the producer's release in commit(), so the bytes it wrote
            // are visible before we read them.
            write_cache_ = write_.load(std::memory_order_acquire);
        }
        return regions(r, write_cache_ - r);
    }

    // Frees the first `bytes` of the last peek (bytes <= its size).
    void release(size_t bytes) noexcept {
        // Relaxed: only this thread stores read_.
        const uint64_t r = read_.load(std::memory_order_relaxed);
        // Release: our reads of the freed bytes complete before the producer may reuse
        // them (pairs with the acquire in reserve()).
        read_.store(r + bytes, std::memory_order_release);
    }

    // Copies out the most readable bytes that fit in `max_bytes` and are a multiple of
    // `unit` (a record size, so records never split), releases them; returns the count.
    [[nodiscard]] size_t pop(void* dst, size_t max_bytes, size_t unit = 1) noexcept {
        RingRegions r = peek(max_bytes);
        size_t n = std::min(r.size(), max_bytes);
        n -= n % unit;
        if (n == 0) return 0;
        auto* out = static_cast<std::byte*>(dst);
        const size_t a = std::min(n, r.first.size());
        std::memcpy(out, r.first.data(), a);
        std::memcpy(out + a, r.second.data(), n - a);
        release(n);
        return n;
    }

    // --- either side, or a third thread ---

    // Bytes readable now (exact for the consumer; a snapshot for anyone else).
    size_t size() const noexcept {
        // Acquire on read_ first: it synchronises with the consumer's release, which came
        // after the consumer saw write_ >= read_, so the load of write_ below cannot see
        // an older value and the difference never goes negative.
        const uint64_t r = read_.load(std::memory_order_acquire);
        // Acquire: pairs with commit()'s release.
        const uint64_t w = write_.load(std::memory_order_acquire);
        // Between the two loads both sides may have moved on; a third thread can then see
        // more than a ring's worth, which is capped.
        return static_cast<size_t>(std::min<uint64_t>(w - r, capacity_));
    }

    // Copies `bytes` of `src` into the regions (which hold at least that many).
    static void copy_in(const RingRegions& r, const void* src, size_t bytes) noexcept {
        const auto* in = static_cast<const std::byte*>(src);
        const size_t a = std::min(bytes, r.first.size());
        std::memcpy(r.first.data(), in, a);
        std::memcpy(r.second.data(), in + a, bytes - a);
    }

private:
    struct Free {
        void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{kCacheLine}); }
    };

    RingRegions regions(uint64_t pos, size_t bytes) const noexcept {
        const size_t at = static_cast<size_t>(pos & mask_);
        const size_t first = std::min(bytes, capacity_ - at);
        return RingRegions{std::span<std::byte>(data_.get() + at, first),
                           std::span<std::byte>(data_.get(), bytes - first)};
    }

    // Read-only after construction: shared by both sides without contention.
    alignas(kCacheLine) const size_t capacity_;
    const size_t mask_;
    const std::unique_ptr<std::byte, Free> data_;

    // Producer's line: its index and its cached copy of the consumer's.
    alignas(kCacheLine) std::atomic<uint64_t> write_{0};
    uint64_t read_cache_ = 0;

    // Consumer's line: its index and its cached copy of the producer's.
    alignas(kCacheLine) std::atomic<uint64_t> read_{0};
    uint64_t write_cache_ = 0;
};

static_assert(alignof(SpscByteRing) == SpscByteRing::kCacheLine, "the ring starts on a cache line of its own");
static_assert(sizeof(SpscByteRing) == 3 * SpscByteRing::kCacheLine,
              "shared, producer and consumer lines, nothing more");

}  // namespace zehal
