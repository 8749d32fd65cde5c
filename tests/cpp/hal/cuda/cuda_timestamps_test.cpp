// Kernel and synchronized timestamps on the CUDA backend (contract §3).
#include <gtest/gtest.h>

#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

constexpr uint32_t kMapped = hal::kPoolHostVisible | hal::kPoolKernelMappedTimestamp;

TEST(CudaTimestamps, CountSemanticsAndNotReady) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Events ev(dev, 1, kMapped);
    hal::EventRef e = ev.events[0];
    hal::KernelTimestampResult r[3];
    const hal::KernelTimestampResult poison{7, 7, 7, 7};
    r[0] = poison;
    uint32_t count = 1;
    EXPECT_EQ(e->query_kernel_timestamps(&count, r), ZE_RESULT_NOT_READY);
    EXPECT_EQ(r[0].global_start, 7u);  // untouched
    EXPECT_EQ(e->query_kernel_timestamps(nullptr, r), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(e->query_kernel_timestamps(&count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);

    Memory a(dev, hal::MemoryKind::host, 1 << 20), b(dev, hal::MemoryKind::device, 1 << 20);
    ASSERT_EQ(q->append_copy(b.ptr, a.ptr, 1 << 20, e, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    count = 0;
    ASSERT_EQ(e->query_kernel_timestamps(&count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 1u);
    count = 3;
    ASSERT_EQ(e->query_kernel_timestamps(&count, r), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 1u);  // corrected
    EXPECT_LE(r[0].global_start, r[0].global_end);
    EXPECT_EQ(r[0].context_start, r[0].global_start);
    EXPECT_EQ(r[0].context_end, r[0].global_end);
    EXPECT_GT(r[0].global_end - r[0].global_start, 0u);  // 1 MiB takes more than a ns
    count = 1;
    ASSERT_EQ(e->query_synchronized_timestamps(&count, r), ZE_RESULT_SUCCESS);
    EXPECT_LE(r[0].global_start, r[0].global_end);

    // Signalled by the host: no packets.
    ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    count = 0;
    ASSERT_EQ(e->query_kernel_timestamps(&count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 0u);
}

TEST(CudaTimestamps, PoolsWithoutTheFlags) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    Events plain(dev, 1), kernel(dev, 1, hal::kPoolKernelTimestamp);
    ASSERT_EQ(plain.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(kernel.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    uint32_t count = 0;
    hal::KernelTimestampResult r{};
    EXPECT_EQ(plain.events[0]->query_kernel_timestamps(&count, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(plain.events[0]->query_synchronized_timestamps(&count, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(kernel.events[0]->query_kernel_timestamps(&count, &r), ZE_RESULT_SUCCESS);
    EXPECT_EQ(kernel.events[0]->query_synchronized_timestamps(&count, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST(CudaTimestamps, SynchronizedBetweenHostReadsFor1000Commands) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Events ev(dev, 1, kMapped);
    hal::EventRef e = ev.events[0];
    Memory a(dev, hal::MemoryKind::host, 4096), b(dev, hal::MemoryKind::device, 4096);
    uint64_t previous_start = 0;
    for (int i = 0; i < 1000; ++i) {
        ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
        const uint64_t before = host_now_ns();
        if (i % 2)
            ASSERT_EQ(q->append_copy(b.ptr, a.ptr, 64 << (i % 7), e, {}), ZE_RESULT_SUCCESS);
        else
            ASSERT_EQ(q->append_fill(b.ptr, a.ptr, 4, 4096, e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        const uint64_t after = host_now_ns();
        uint32_t count = 1;
        hal::KernelTimestampResult ticks{}, ns{};
        ASSERT_EQ(e->query_kernel_timestamps(&count, &ticks), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->query_synchronized_timestamps(&count, &ns), ZE_RESULT_SUCCESS);
        ASSERT_LE(ticks.global_start, ticks.global_end);
        ASSERT_LE(before, ns.global_start) << "command " << i;
        ASSERT_LE(ns.global_start, ns.global_end) << "command " << i;
        ASSERT_LE(ns.global_end, after) << "command " << i;
        ASSERT_EQ(ns.context_start, ns.global_start);
        ASSERT_GE(ns.global_start, previous_start);  // after a reset and resubmission: not earlier
        previous_start = ns.global_start;
    }
}

}  // namespace
}  // namespace zehal::test
