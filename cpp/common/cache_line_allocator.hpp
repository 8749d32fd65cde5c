// Cache lines: their size, and an allocator of whole lines, so that memory one thread writes
// (a free list, say) never shares a line with what another thread writes, wherever the heap
// put them.
#pragma once

#include <cstddef>
#include <new>

namespace zehal {

// The cache line size that keeps data of different threads apart. A fixed 64, not
// std::hardware_destructive_interference_size: GCC's value follows -mtune, so two
// translation units could disagree on the layout of a class aligned with it (GCC warns).
inline constexpr size_t kCacheLineBytes = 64;

// Hands out storage aligned to, and a multiple of, kCacheLineBytes.
template <typename T>
class CacheLineAllocator {
public:
    using value_type = T;

    CacheLineAllocator() noexcept = default;
    template <typename U>
    CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}

    T* allocate(size_t n) {
        const size_t bytes = (n * sizeof(T) + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes;
        return static_cast<T*>(::operator new (bytes, std::align_val_t{kCacheLineBytes}));
    }
    void deallocate(T* p, size_t) noexcept { ::operator delete (p, std::align_val_t{kCacheLineBytes}); }

    template <typename U>
    bool operator==(const CacheLineAllocator<U>&) const noexcept {
        return true;
    }
};

}  // namespace zehal
