#include "aml/pool.hpp"

#include <algorithm>
#include <bit>
#include <new>
#include <utility>

#include "aml/area.hpp"

namespace zehal::aml {

namespace {

// The smallest block of a size class: the upstream's alignment, at least 256 bytes.
constexpr size_t kMinBlock = 256;

// `v` rounded up to a multiple of `to` (> 0) into *out; false when that does not fit a size_t.
bool round_up(size_t v, size_t to, size_t* out) {
    const size_t rest = v % to;
    if (rest && v > SIZE_MAX - (to - rest)) return false;
    *out = rest ? v + (to - rest) : v;
    return true;
}

// The bin index of the calling thread: threads take indices in turn at their first call.
size_t my_shard(size_t shards) {
    static std::atomic<size_t> next{0};
    // Relaxed: only spreads threads over bins; any value is correct.
    thread_local const size_t index = next.fetch_add(1, std::memory_order_relaxed);
    return index % shards;
}

}  // namespace

Pool::Pool(std::shared_ptr<Area> upstream, size_t maximum_bytes)
    : upstream_(std::move(upstream)),
      alignment_(upstream_->alignment()),
      min_block_(std::max(alignment_, kMinBlock)),
      maximum_(maximum_bytes) {
    // m x 1, then 2, 3, 4, 6, 8, 12, ... (each power of two and one and a half of it) up to
    // kMaxClassBytes; at least the first.
    // Multiples are compared in blocks of m, so that a huge m cannot overflow them.
    const size_t most = kMaxClassBytes / min_block_;
    size_t count = 0;
    class_bytes_[count++] = min_block_;
    for (size_t pow = 2; count + 2 <= kClasses && pow <= most; pow *= 2) {
        class_bytes_[count++] = pow * min_block_;
        if (pow + pow / 2 <= most) class_bytes_[count++] = (pow + pow / 2) * min_block_;
    }
    classes_ = count;
}

Pool::~Pool() {
    for (const auto& c : chunks_) upstream_->unmap(c->base);
}

size_t Pool::class_of(size_t size) const noexcept {
    // The first class that holds `size`, in blocks of m: 1 -> 0, 2 -> 1, and for q in
    // (2^k, 2^(k+1)], k >= 1: 3 x 2^(k-1) (index 2k) when it holds q, else 2^(k+1) (2k + 1).
    // kClasses (the arena) past the last class.
    const size_t q = size / min_block_ + (size % min_block_ != 0);
    size_t index = q - 1;
    if (q > 2) {
        const size_t k = static_cast<size_t>(std::bit_width(q - 1)) - 1;
        index = 2 * k + (q > 3 * (size_t{1} << (k - 1)));
    }
    return index < classes_ ? index : kClasses;
}

ze_result_t Pool::reserve(size_t bytes) {
    if (bytes == 0) return ZE_RESULT_SUCCESS;
    size_t aligned = 0;
    if (!round_up(bytes, alignment_, &aligned)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    std::lock_guard lock(arena_mu_);
    return new_chunk(aligned, true);
}

ze_result_t Pool::allocate(size_t size, void** out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    const size_t cls = class_of(size);
    // Relaxed: compared with itself after the attempt, on this thread.
    const uint64_t refused = upstream_refusals_.load(std::memory_order_relaxed);
    ze_result_t r = cls < kClasses ? allocate_small(cls, size, out) : allocate_large(size, out);
    if (r == ZE_RESULT_SUCCESS || upstream_refusals_.load(std::memory_order_relaxed) == refused) return r;
    // Upstream is out of memory while the pool may hold free blocks of other sizes: give
    // those back (as CuPy's pool does) and try once more.
    trim();
    return cls < kClasses ? allocate_small(cls, size, out) : allocate_large(size, out);
}

ze_result_t Pool::allocate_small(size_t cls, size_t size, void** out) {
    Shard& shard = shards_[my_shard(kShards)];
    {
        std::lock_guard lock(shard.mu);
        if (size <= shard.cap - shard.bytes_in_use) return take_small(shard, cls, size, out);
    }
    return take_over_cap(shard, [&] { return take_small(shard, cls, size, out); });
}

ze_result_t Pool::take_small(Shard& shard, size_t cls, size_t size, void** out) {
    Bin& bin = shard.bins[cls];
    const size_t block = class_bytes_[cls];
    const bool hit = !bin.free.empty();
    if (!hit) {
        if (ze_result_t r = grow(bin, block); r != ZE_RESULT_SUCCESS) return r;
    }
    auto [p, slab] = bin.free.back();
    bin.free.pop_back();
    slab->asked[static_cast<size_t>(p - slab->base) / block] = size;
    ++slab->in_use;
    shard.bytes_in_use += size;
    ++shard.allocations;
    ++shard.total_allocations;
    shard.cache_hits += hit ? 1 : 0;
    *out = p;
    return ZE_RESULT_SUCCESS;
}

template <typename Take>
ze_result_t Pool::take_over_cap(Shard& mine, Take take) {
    std::lock_guard peak(peak_mu_);
    // Every shard with a cap, and this one, locked in index order: the others cannot grow
    // (they would need peak_mu_), and what they hold is read at one instant.
    std::array<Shard*, kShards> held{};
    size_t count = 0;
    for (size_t i = 0; i < kShards; ++i) {
        Shard& s = shards_[i];
        if (&s != &mine && !(capped_ >> i & 1)) continue;
        s.mu.lock();
        held[count++] = &s;
    }
    mine.robbed_streak = mine.robbed ? mine.robbed_streak + 1 : 0;
    mine.robbed = false;
    const ze_result_t r = take();
    if (r == ZE_RESULT_SUCCESS && mine.bytes_in_use > mine.cap) {
        const uint64_t want = mine.bytes_in_use - mine.cap;
        uint64_t spare = peak_ - assigned_;
        // Caps left unused by other shards move here first, unless this shard keeps losing
        // what it takes.
        for (size_t i = 0; i < count && spare < want && mine.robbed_streak < kRobbedStreak; ++i) {
            Shard& s = *held[i];
            if (&s == &mine || s.cap == s.bytes_in_use) continue;
            const uint64_t moved = std::min(s.cap - s.bytes_in_use, want - spare);
            s.cap -= moved;
            s.robbed = true;
            assigned_ -= moved;
            spare += moved;
        }
        // None left (or none taken): the peak rises. When every other cap is what its shard
        // holds, the new peak is the exact sum.
        if (spare < want) peak_ += want - spare;
        mine.cap += want;
        assigned_ += want;
    }
    for (size_t i = 0; i < kShards; ++i) {
        if (shards_[i].cap)
            capped_ |= uint32_t{1} << i;
        else
            capped_ &= ~(uint32_t{1} << i);
    }
    for (size_t i = count; i-- > 0;) held[i]->mu.unlock();
    return r;
}

ze_result_t Pool::grow(Bin& bin, size_t block) {
    // A slab of up to kSlabBlocks blocks, within [one block, kMinChunkBytes]; under a maximum
    // that leaves less room, one block. Always whole blocks: trim() gives back exactly what
    // was carved.
    const size_t want = std::clamp<size_t>(kMinChunkBytes / block, 1, kSlabBlocks) * block;
    size_t bytes = want;
    char* base = nullptr;
    {
        std::lock_guard lock(arena_mu_);
        ze_result_t r = carve(bytes, &base);
        if (r != ZE_RESULT_SUCCESS && want > block) {
            bytes = block;
            r = carve(bytes, &base);
        }
        if (r != ZE_RESULT_SUCCESS) return r;
    }
    try {
        auto slab = std::make_unique<Slab>();
        slab->base = base;
        slab->blocks = static_cast<uint32_t>(bytes / block);
        bin.free.reserve(bin.free.size() + slab->blocks);
        auto at = std::lower_bound(bin.slabs.begin(), bin.slabs.end(), base,
                                   [](const std::unique_ptr<Slab>& s, const char* b) { return s->base < b; });
        Slab* raw = slab.get();
        bin.slabs.insert(at, std::move(slab));
        for (uint32_t i = raw->blocks; i-- > 0;) bin.free.emplace_back(raw->base + i * block, raw);
    } catch (const std::bad_alloc&) {
        std::lock_guard lock(arena_mu_);
        uncarve(base, bytes);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t Pool::allocate_large(size_t size, void** out) {
    size_t bytes = 0;
    if (!round_up(size, alignment_, &bytes)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    Shard& shard = shards_[my_shard(kShards)];
    {
        std::lock_guard lock(shard.mu);
        if (size <= shard.cap - shard.bytes_in_use) return take_large(shard, size, out);
    }
    return take_over_cap(shard, [&] { return take_large(shard, size, out); });
}

ze_result_t Pool::take_large(Shard& shard, size_t size, void** out) {
    size_t bytes = 0;
    if (!round_up(size, alignment_, &bytes)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    std::lock_guard lock(arena_mu_);
    char* p = nullptr;
    if (ze_result_t r = carve(bytes, &p); r != ZE_RESULT_SUCCESS) return r;
    try {
        large_blocks_.emplace(p, LargeBlock{size, static_cast<size_t>(&shard - shards_.data())});
    } catch (const std::bad_alloc&) {
        uncarve(p, bytes);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    shard.bytes_in_use += size;
    ++shard.allocations;
    ++shard.total_allocations;
    *out = p;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Pool::deallocate(void* ptr, size_t size) {
    if (!ptr) return ZE_RESULT_SUCCESS;
    char* p = static_cast<char*>(ptr);
    // Size known: its class only, the caller's shard first (usually the block's own).
    const size_t first = size ? class_of(size) : 0;
    const size_t last = size ? first + 1 : classes_;
    const size_t mine = my_shard(kShards);
    if (first < kClasses)
        for (size_t k = 0; k < kShards; ++k)
            if (free_in(shards_[(mine + k) % kShards], first, last, p) == ZE_RESULT_SUCCESS) return ZE_RESULT_SUCCESS;
    return size && first < kClasses ? ZE_RESULT_ERROR_INVALID_ARGUMENT : deallocate_large(p);
}

ze_result_t Pool::free_in(Shard& shard, size_t first, size_t last, char* p) {
    std::lock_guard lock(shard.mu);
    for (size_t cls = first; cls < last; ++cls) {
        const size_t block = class_bytes_[cls];
        Bin& bin = shard.bins[cls];
        auto at = std::upper_bound(bin.slabs.begin(), bin.slabs.end(), p,
                                   [](const char* b, const std::unique_ptr<Slab>& s) { return b < s->base; });
        if (at == bin.slabs.begin()) continue;
        Slab& slab = **(at - 1);
        const size_t offset = static_cast<size_t>(p - slab.base);
        if (offset / block >= slab.blocks) continue;
        size_t& slot = slab.asked[offset / block];
        // Inside this slab: an interior pointer or one already given back is refused.
        if (offset % block || slot == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        // The free list has room for every block of every slab (reserved in grow()).
        bin.free.emplace_back(p, &slab);
        shard.bytes_in_use -= std::exchange(slot, 0);
        --slab.in_use;
        --shard.allocations;
        return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t Pool::deallocate_large(char* p) {
    // The block's shard first (its lock comes before arena_mu_), then the block again: another
    // thread may have given it back in between.
    size_t index = 0;
    {
        std::lock_guard lock(arena_mu_);
        auto it = large_blocks_.find(p);
        if (it == large_blocks_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        index = it->second.shard;
    }
    Shard& shard = shards_[index];
    std::lock_guard account(shard.mu);
    std::lock_guard lock(arena_mu_);
    auto it = large_blocks_.find(p);
    if (it == large_blocks_.end() || it->second.shard != index) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const size_t size = it->second.size;
    large_blocks_.erase(it);
    size_t bytes = size;
    round_up(size, alignment_, &bytes);  // fits: take_large carved it
    uncarve(p, bytes);
    shard.bytes_in_use -= size;
    --shard.allocations;
    return ZE_RESULT_SUCCESS;
}

bool Pool::find(const void* ptr, size_t* size) const {
    const char* p = static_cast<const char*>(ptr);
    for (const Shard& shard : shards_) {
        std::lock_guard lock(shard.mu);
        for (size_t cls = 0; cls < classes_; ++cls) {
            const size_t block = class_bytes_[cls];
            for (const auto& slab : shard.bins[cls].slabs) {
                if (p < slab->base || p >= slab->base + static_cast<size_t>(slab->blocks) * block) continue;
                const size_t offset = static_cast<size_t>(p - slab->base);
                if (offset % block || slab->asked[offset / block] == 0) return false;
                if (size) *size = slab->asked[offset / block];
                return true;
            }
        }
    }
    std::lock_guard lock(arena_mu_);
    auto it = large_blocks_.find(const_cast<char*>(p));
    if (it == large_blocks_.end()) return false;
    if (size) *size = it->second.size;
    return true;
}

ze_result_t Pool::trim() {
    for (Shard& shard : shards_) {
        std::lock_guard lock(shard.mu);
        for (size_t cls = 0; cls < classes_; ++cls) {
            Bin& bin = shard.bins[cls];
            const size_t block = class_bytes_[cls];
            std::vector<std::unique_ptr<Slab>> keep;
            for (auto& slab : bin.slabs) {
                if (slab->in_use) {
                    keep.push_back(std::move(slab));
                    continue;
                }
                const size_t bytes = static_cast<size_t>(slab->blocks) * block;
                const char* lo = slab->base;
                std::erase_if(bin.free,
                              [&](const std::pair<char*, Slab*>& f) { return f.first >= lo && f.first < lo + bytes; });
                std::lock_guard arena(arena_mu_);
                uncarve(slab->base, bytes);
            }
            bin.slabs = std::move(keep);
        }
    }
    std::lock_guard lock(arena_mu_);
    ze_result_t result = ZE_RESULT_SUCCESS;
    std::erase_if(chunks_, [&](const std::unique_ptr<Chunk>& chunk) {
        if (chunk->used) return false;
        if (ze_result_t r = upstream_->unmap(chunk->base); r != ZE_RESULT_SUCCESS) {
            result = r;
            return false;
        }
        reserved_ -= chunk->bytes;
        return true;
    });
    return result;
}

ze_result_t Pool::carve(size_t bytes, char** out) {
    for (int attempt = 0; attempt < 2; ++attempt) {
        for (const auto& chunk : chunks_) {
            for (auto it = chunk->free.begin(); it != chunk->free.end(); ++it) {
                if (it->second < bytes) continue;
                const size_t offset = it->first;
                const size_t left = it->second - bytes;
                chunk->free.erase(it);
                if (left) chunk->free.emplace(offset + bytes, left);
                chunk->used += bytes;
                *out = chunk->base + offset;
                return ZE_RESULT_SUCCESS;
            }
        }
        if (attempt == 0) {
            if (ze_result_t r = new_chunk(bytes, false); r != ZE_RESULT_SUCCESS) return r;
        }
    }
    return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

void Pool::uncarve(char* p, size_t bytes) {
    Chunk* chunk = chunk_of(p);
    size_t offset = static_cast<size_t>(p - chunk->base);
    chunk->used -= bytes;
    // Coalesce with the free ranges on either side.
    auto next = chunk->free.lower_bound(offset);
    if (next != chunk->free.end() && next->first == offset + bytes) {
        bytes += next->second;
        next = chunk->free.erase(next);
    }
    if (next != chunk->free.begin()) {
        auto prev = std::prev(next);
        if (prev->first + prev->second == offset) {
            offset = prev->first;
            bytes += prev->second;
            chunk->free.erase(prev);
        }
    }
    chunk->free.emplace(offset, bytes);
}

ze_result_t Pool::new_chunk(size_t at_least, bool exact) {
    // Chunks grow with the pool (a chunk the size of what is reserved), within bounds.
    // `at_least` is a multiple of the alignment (the callers round it).
    size_t bytes = exact ? at_least : std::max(at_least, std::clamp<size_t>(reserved_, kMinChunkBytes, kMaxChunkBytes));
    if (!round_up(bytes, alignment_, &bytes)) bytes = at_least;
    if (maximum_) {
        if (at_least > maximum_ - reserved_) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        bytes = std::min<size_t>(bytes, maximum_ - reserved_) / alignment_ * alignment_;
        if (bytes < at_least) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    auto chunk = std::make_unique<Chunk>();
    void* p = nullptr;
    if (ze_result_t r = upstream_->map(bytes, &p); r != ZE_RESULT_SUCCESS) {
        // A grown chunk the upstream cannot give: what was asked for may still fit.
        if (bytes == at_least) {
            upstream_refusals_.fetch_add(1, std::memory_order_relaxed);  // relaxed: see allocate()
            return r;
        }
        bytes = at_least;
        if (ze_result_t again = upstream_->map(bytes, &p); again != ZE_RESULT_SUCCESS) {
            upstream_refusals_.fetch_add(1, std::memory_order_relaxed);  // relaxed: see allocate()
            return again;
        }
    }
    chunk->base = static_cast<char*>(p);
    chunk->bytes = bytes;
    try {
        chunk->free.emplace(0, bytes);
        auto at = std::lower_bound(chunks_.begin(), chunks_.end(), chunk->base,
                                   [](const std::unique_ptr<Chunk>& c, const char* b) { return c->base < b; });
        chunks_.insert(at, std::move(chunk));
    } catch (const std::bad_alloc&) {
        upstream_->unmap(p);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    reserved_ += bytes;
    ++upstream_allocations_;
    return ZE_RESULT_SUCCESS;
}

Pool::Chunk* Pool::chunk_of(const char* p) {
    auto at = std::upper_bound(chunks_.begin(), chunks_.end(), p,
                               [](const char* b, const std::unique_ptr<Chunk>& c) { return b < c->base; });
    return (at - 1)->get();
}

PoolStats Pool::stats() const {
    PoolStats s;
    // Every shard at one instant (the lock order of take_over_cap), so the sum is one that
    // bytes_in_use really had, at most the peak.
    std::lock_guard peak(peak_mu_);
    for (const Shard& shard : shards_) {
        shard.mu.lock();
        s.bytes_in_use += shard.bytes_in_use;
        s.allocations += shard.allocations;
        s.total_allocations += shard.total_allocations;
        s.cache_hits += shard.cache_hits;
    }
    {
        std::lock_guard lock(arena_mu_);
        s.bytes_reserved = reserved_;
        s.upstream_allocations = upstream_allocations_;
    }
    for (size_t i = kShards; i-- > 0;) shards_[i].mu.unlock();
    s.peak_bytes_in_use = peak_;
    return s;
}

}  // namespace zehal::aml
