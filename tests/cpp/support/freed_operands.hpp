// One check for the queues of every backend: a queue that copied between allocations
// (cuda and level_zero queues keep the operands they found, hal::OperandCache) forgets them
// once freed, and sizes a smaller allocation made since by its own size. (A freed pointer
// itself is memory no zehal allocation holds, system memory: using it is the caller's error,
// as in Level Zero, so it is not copied here.)
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>

#include "hal/device.hpp"
#include "hal/queue.hpp"

namespace zehal::test {

// Runs the check on a queue of engine group `ordinal` of `device`.
inline void expect_freed_operands_refused(const hal::DeviceRef& device, uint32_t ordinal) {
    constexpr uint64_t kHangGuard = 20'000'000'000ull;
    // An allocation freed at the end of the check unless the check freed it first.
    struct Allocation {
        hal::DeviceRef device;
        void* ptr = nullptr;
        Allocation(const hal::DeviceRef& d, hal::MemoryKind kind, size_t size) : device(d) {
            EXPECT_EQ(d->allocate(kind, size, 0, 0, 0, &ptr), ZE_RESULT_SUCCESS);
        }
        ~Allocation() {
            if (ptr) device->free(ptr);
        }
        void* release_and_free() {
            void* p = ptr;
            EXPECT_EQ(device->free(ptr), ZE_RESULT_SUCCESS);
            ptr = nullptr;
            return p;
        }
    };
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(device->create_queue(ordinal, 0, &q), ZE_RESULT_SUCCESS);
    auto copy_and_wait = [&](void* dst, const void* src, size_t size) {
        EXPECT_EQ(q->append_copy(dst, src, size, nullptr, {}), ZE_RESULT_SUCCESS);
        EXPECT_EQ(q->host_synchronize(kHangGuard), ZE_RESULT_SUCCESS);
    };
    Allocation src(device, hal::MemoryKind::host, 4096), dst(device, hal::MemoryKind::device, 4096),
        spare(device, hal::MemoryKind::device, 4096);
    ASSERT_TRUE(src.ptr && dst.ptr && spare.ptr);
    copy_and_wait(dst.ptr, src.ptr, 4096);
    copy_and_wait(dst.ptr, src.ptr, 4096);
    dst.release_and_free();
    // A new, smaller allocation (at the same address or not) takes no more than its size.
    Allocation small(device, hal::MemoryKind::device, 64);
    EXPECT_EQ(q->append_copy(small.ptr, src.ptr, 4096, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    copy_and_wait(small.ptr, src.ptr, 64);
    // The same for the source, a host allocation.
    src.release_and_free();
    Allocation small_src(device, hal::MemoryKind::host, 64);
    EXPECT_EQ(q->append_copy(spare.ptr, small_src.ptr, 4096, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    copy_and_wait(spare.ptr, small_src.ptr, 64);
    EXPECT_EQ(q->host_synchronize(kHangGuard), ZE_RESULT_SUCCESS);
}

}  // namespace zehal::test
