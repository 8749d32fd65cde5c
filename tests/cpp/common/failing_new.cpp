#include "failing_new.hpp"

#include <cstdlib>
#include <new>

namespace {
// Allocations left on this thread before the armed one fails; -1 when disarmed.
thread_local long countdown = -1;

// Whether this allocation is the armed one (which then fails).
bool armed_failure() {
    if (countdown == 0) {
        countdown = -1;
        return true;
    }
    if (countdown > 0) --countdown;
    return false;
}

void* allocate(std::size_t n, std::size_t alignment = 0) {
    if (armed_failure()) throw std::bad_alloc();
    n = n ? n : 1;
    void* p = alignment ? std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment) : std::malloc(n);
    if (!p) throw std::bad_alloc();
    return p;
}

void* allocate_nothrow(std::size_t n, std::size_t alignment = 0) noexcept {
    try {
        return allocate(n, alignment);
    } catch (const std::bad_alloc&) {
        return nullptr;
    }
}
}  // namespace

namespace zehal::test {
void fail_allocation(long n) { countdown = n; }
bool failure_pending() { return countdown >= 0; }
}  // namespace zehal::test

// Every form of the global operators, so that no allocation of the program is made by one
// allocator and freed by another.
void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return allocate_nothrow(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return allocate_nothrow(n); }
void* operator new(std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t n, std::align_val_t a) { return allocate(n, static_cast<std::size_t>(a)); }
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate_nothrow(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
    return allocate_nothrow(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
