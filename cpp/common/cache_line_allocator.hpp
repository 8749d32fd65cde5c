// An allocator of whole cache lines: memory that one thread writes (a free list, say) never
// shares a line with what another thread writes, wherever the heap put them.
#pragma once

#include <cstddef>
#include <new>

namespace zehal {

// Hands out storage aligned to, and a multiple of, kCacheLine bytes.
template <typename T>
class CacheLineAllocator {
public:
    static constexpr size_t kCacheLine = 64;
    using value_type = T;

    CacheLineAllocator() noexcept = default;
    template <typename U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}

    T* allocate(size_t n) {
        const size_t bytes = (n * sizeof(T) + kCacheLine - 1) / kCacheLine * kCacheLine;
        return static_cast<T*>(::operator new(bytes, std::align_val_t{kCacheLine}));
    }
    void deallocate(T* p, size_t) noexcept { ::operator delete(p, std::align_val_t{kCacheLine}); }

    template <typename U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept {
        return true;
    }
};

}  // namespace zehal
