#include "failing_new.hpp"

#include <cstdlib>
#include <new>

namespace {
// Allocations left on this thread before the armed one fails; -1 when disarmed.
thread_local long countdown = -1;

void* allocate(std::size_t n) {
    if (countdown == 0) {
        countdown = -1;
        throw std::bad_alloc();
    }
    if (countdown > 0) --countdown;
    if (void* p = std::malloc(n ? n : 1)) return p;
    throw std::bad_alloc();
}
}  // namespace

namespace zehal::test {
void fail_allocation(long n) { countdown = n; }
bool failure_pending() { return countdown >= 0; }
}  // namespace zehal::test

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
