#include "aml/pool.hpp"

#include <algorithm>
#include <bit>
#include <new>

#include "aml/area.hpp"

namespace zehal::aml {

namespace {

// The smallest block of a size class: the upstream's alignment, at least 256 bytes.
constexpr size_t kMinBlock = 256;

size_t round_up(size_t v, size_t to) {
    return (v + to - 1) / to * to;
}

}  // namespace

Pool::Pool(std::shared_ptr<Area> upstream, size_t maximum_bytes)
    : upstream_(std::move(upstream)),
      alignment_(upstream_->alignment()),
      min_block_(std::max(alignment_, kMinBlock)),
      maximum_(maximum_bytes) {
    for (size_t k = 0; k < kClasses; ++k) classes_[k].block = min_block_ << k;
}

Pool::~Pool() {
    for (const auto& c : chunks_) upstream_->unmap(c->base);
}

size_t Pool::class_of(size_t size) const noexcept {
    if (size > kMaxClassBytes || size > (min_block_ << (kClasses - 1))) return kClasses;
    const size_t blocks = (size + min_block_ - 1) / min_block_;
    return static_cast<size_t>(std::bit_width(blocks - 1));
}

ze_result_t Pool::reserve(size_t bytes) {
    if (bytes == 0) return ZE_RESULT_SUCCESS;
    std::lock_guard lock(arena_mu_);
    return new_chunk(round_up(bytes, alignment_));
}

ze_result_t Pool::allocate(size_t size, void** out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    const size_t cls = class_of(size);
    return cls < kClasses ? allocate_small(cls, size, out) : allocate_large(size, out);
}

ze_result_t Pool::allocate_small(size_t cls, size_t size, void** out) {
    SizeClass& c = classes_[cls];
    std::lock_guard lock(c.mu);
    const bool hit = !c.free.empty();
    if (!hit) {
        if (ze_result_t r = grow(c); r != ZE_RESULT_SUCCESS) return r;
    }
    auto [p, slab] = c.free.back();
    c.free.pop_back();
    slab->asked[static_cast<size_t>(p - slab->base) / c.block] = size;
    ++slab->in_use;
    count_allocation(size, hit);
    *out = p;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Pool::grow(SizeClass& c) {
    // A slab of 64 blocks, within [one block, kMinChunkBytes]; under a maximum that leaves
    // less room, one block.
    const size_t want = std::max(c.block, std::min<size_t>(c.block * 64, kMinChunkBytes));
    size_t bytes = want;
    char* base = nullptr;
    {
        std::lock_guard lock(arena_mu_);
        ze_result_t r = carve(bytes, &base);
        if (r != ZE_RESULT_SUCCESS && want > c.block) {
            bytes = c.block;
            r = carve(bytes, &base);
        }
        if (r != ZE_RESULT_SUCCESS) return r;
    }
    try {
        auto slab = std::make_unique<Slab>();
        slab->base = base;
        slab->blocks = static_cast<uint32_t>(bytes / c.block);
        slab->asked.assign(slab->blocks, 0);
        c.free.reserve(c.free.size() + slab->blocks);
        auto at = std::lower_bound(c.slabs.begin(), c.slabs.end(), base,
                                   [](const std::unique_ptr<Slab>& s, const char* b) { return s->base < b; });
        Slab* raw = slab.get();
        c.slabs.insert(at, std::move(slab));
        for (uint32_t i = raw->blocks; i-- > 0;) c.free.emplace_back(raw->base + i * c.block, raw);
    } catch (const std::bad_alloc&) {
        std::lock_guard lock(arena_mu_);
        uncarve(base, bytes);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t Pool::allocate_large(size_t size, void** out) {
    const size_t bytes = round_up(size, alignment_);
    if (bytes < size) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    std::lock_guard lock(arena_mu_);
    char* p = nullptr;
    if (ze_result_t r = carve(bytes, &p); r != ZE_RESULT_SUCCESS) return r;
    try {
        large_.emplace(p, size);
    } catch (const std::bad_alloc&) {
        uncarve(p, bytes);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    count_allocation(size, false);
    *out = p;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Pool::deallocate(void* ptr, size_t size) {
    if (!ptr) return ZE_RESULT_SUCCESS;
    char* p = static_cast<char*>(ptr);
    if (size) {
        const size_t cls = class_of(size);
        return cls < kClasses ? deallocate_small(cls, p) : deallocate_large(p);
    }
    // Size unknown: the classes in turn, then the arena.
    for (size_t cls = 0; cls < kClasses; ++cls)
        if (deallocate_small(cls, p) == ZE_RESULT_SUCCESS) return ZE_RESULT_SUCCESS;
    return deallocate_large(p);
}

ze_result_t Pool::deallocate_small(size_t cls, char* p) {
    SizeClass& c = classes_[cls];
    std::lock_guard lock(c.mu);
    auto at = std::upper_bound(c.slabs.begin(), c.slabs.end(), p,
                               [](const char* b, const std::unique_ptr<Slab>& s) { return b < s->base; });
    if (at == c.slabs.begin()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    Slab& slab = **(at - 1);
    const size_t offset = static_cast<size_t>(p - slab.base);
    if (offset % c.block || offset / c.block >= slab.blocks) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    size_t& asked = slab.asked[offset / c.block];
    if (asked == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // already given back
    // The free list has room for every block of every slab (reserved in grow()).
    c.free.emplace_back(p, &slab);
    count_free(asked);
    asked = 0;
    --slab.in_use;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Pool::deallocate_large(char* p) {
    std::lock_guard lock(arena_mu_);
    auto it = large_.find(p);
    if (it == large_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const size_t size = it->second;
    large_.erase(it);
    uncarve(p, round_up(size, alignment_));
    count_free(size);
    return ZE_RESULT_SUCCESS;
}

bool Pool::find(const void* ptr, size_t* size) const {
    const char* p = static_cast<const char*>(ptr);
    for (const SizeClass& c : classes_) {
        std::lock_guard lock(c.mu);
        for (const auto& slab : c.slabs) {
            if (p < slab->base || p >= slab->base + static_cast<size_t>(slab->blocks) * c.block) continue;
            const size_t offset = static_cast<size_t>(p - slab->base);
            if (offset % c.block || slab->asked[offset / c.block] == 0) return false;
            if (size) *size = slab->asked[offset / c.block];
            return true;
        }
    }
    std::lock_guard lock(arena_mu_);
    auto it = large_.find(const_cast<char*>(p));
    if (it == large_.end()) return false;
    if (size) *size = it->second;
    return true;
}

ze_result_t Pool::trim() {
    for (SizeClass& c : classes_) {
        std::lock_guard lock(c.mu);
        std::vector<std::unique_ptr<Slab>> keep;
        for (auto& slab : c.slabs) {
            if (slab->in_use) {
                keep.push_back(std::move(slab));
                continue;
            }
            const char* lo = slab->base;
            const char* hi = slab->base + static_cast<size_t>(slab->blocks) * c.block;
            std::erase_if(c.free, [&](const std::pair<char*, Slab*>& f) { return f.first >= lo && f.first < hi; });
            std::lock_guard arena(arena_mu_);
            uncarve(slab->base, static_cast<size_t>(slab->blocks) * c.block);
        }
        c.slabs = std::move(keep);
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
        bytes_reserved_.store(reserved_, std::memory_order_relaxed);
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
            if (ze_result_t r = new_chunk(bytes); r != ZE_RESULT_SUCCESS) return r;
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

ze_result_t Pool::new_chunk(size_t at_least) {
    // Chunks grow with the pool (a chunk the size of what is reserved), within bounds.
    size_t bytes = std::max(at_least, std::clamp<size_t>(reserved_, kMinChunkBytes, kMaxChunkBytes));
    bytes = round_up(bytes, alignment_);
    if (maximum_) {
        if (reserved_ + at_least > maximum_) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        bytes = std::min<size_t>(bytes, maximum_ - reserved_) / alignment_ * alignment_;
        if (bytes < at_least) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    auto chunk = std::make_unique<Chunk>();
    void* p = nullptr;
    if (ze_result_t r = upstream_->map(bytes, &p); r != ZE_RESULT_SUCCESS) return r;
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
    bytes_reserved_.store(reserved_, std::memory_order_relaxed);
    upstream_allocations_.fetch_add(1, std::memory_order_relaxed);
    return ZE_RESULT_SUCCESS;
}

Pool::Chunk* Pool::chunk_of(const char* p) {
    auto at = std::upper_bound(chunks_.begin(), chunks_.end(), p,
                               [](const char* b, const std::unique_ptr<Chunk>& c) { return b < c->base; });
    return (at - 1)->get();
}

void Pool::count_allocation(size_t size, bool hit) noexcept {
    // Relaxed: counters, read as such; the peak is raised with a CAS loop.
    const uint64_t now = bytes_in_use_.fetch_add(size, std::memory_order_relaxed) + size;
    uint64_t peak = peak_.load(std::memory_order_relaxed);
    while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
    }
    allocations_.fetch_add(1, std::memory_order_relaxed);
    total_allocations_.fetch_add(1, std::memory_order_relaxed);
    if (hit) cache_hits_.fetch_add(1, std::memory_order_relaxed);
}

void Pool::count_free(size_t size) noexcept {
    // Relaxed: counters (see count_allocation).
    bytes_in_use_.fetch_sub(size, std::memory_order_relaxed);
    allocations_.fetch_sub(1, std::memory_order_relaxed);
}

PoolStats Pool::stats() const {
    PoolStats s;
    // Relaxed: counters (see count_allocation).
    s.bytes_in_use = bytes_in_use_.load(std::memory_order_relaxed);
    s.peak_bytes_in_use = peak_.load(std::memory_order_relaxed);
    s.bytes_reserved = bytes_reserved_.load(std::memory_order_relaxed);
    s.allocations = allocations_.load(std::memory_order_relaxed);
    s.total_allocations = total_allocations_.load(std::memory_order_relaxed);
    s.upstream_allocations = upstream_allocations_.load(std::memory_order_relaxed);
    s.cache_hits = cache_hits_.load(std::memory_order_relaxed);
    return s;
}

}  // namespace zehal::aml
