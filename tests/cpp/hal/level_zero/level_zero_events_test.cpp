// Events and kernel timestamps of the level_zero backend.
#include <gtest/gtest.h>

#include "hal/timestamps.hpp"
#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

TEST(LevelZeroEvents, HostSignalResetAndTheEventOutlivesItsPoolHandle) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    hal::EventRef e;
    {
        Events ev(dev, 1);
        e = ev.events[0];
    }
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_synchronize(1000), ZE_RESULT_NOT_READY);
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
}

TEST(LevelZeroEvents, KernelTimestampsOfACopy) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    const hal::DeviceProperties& p = dev->properties();
    Events ev(dev, 1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Memory a(dev, hal::MemoryKind::device, 1 << 20);
    Memory b(dev, hal::MemoryKind::host, 1 << 20);
    uint32_t count = 0;
    hal::KernelTimestampResult r{};
    ASSERT_EQ(q->append_copy(b.ptr, a.ptr, 1 << 20, ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[0]->query_kernel_timestamps(nullptr, &r), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(ev.events[0]->query_kernel_timestamps(&count, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_GE(count, 1u);
    count = 1;
    ASSERT_EQ(ev.events[0]->query_kernel_timestamps(&count, &r), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 1u);
    const uint32_t bits = p.kernel_timestamp_valid_bits;
    EXPECT_LE(r.global_start, hal::timestamp_max(bits));
    EXPECT_LE(r.global_end, hal::timestamp_max(bits));
    // The copy took less than the wrap period.
    EXPECT_LT(hal::ticks_to_ns(hal::elapsed_ticks(r.global_start, r.global_end, bits), p.timer_hz),
              hal::wrap_period_ns(p.timer_hz, bits));
    EXPECT_EQ(ev.events[0]->query_synchronized_timestamps(&count, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST(LevelZeroEvents, SynchronizedTimestampsFallBetweenSubmitAndCompletion) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::EventPool> pool;
    const uint32_t flags = hal::kPoolHostVisible | hal::kPoolKernelMappedTimestamp;
    if (!(dev->properties().timestamp_flags & hal::kTimestampSynchronized)) {
        EXPECT_EQ(dev->create_event_pool(1, flags, &pool), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        GTEST_SKIP() << "the driver gives no synchronized timestamps";
    }
    Events ev(dev, 1, flags);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Memory a(dev, hal::MemoryKind::device, 1 << 16);
    Memory b(dev, hal::MemoryKind::device, 1 << 16);
    hal::KernelTimestampResult r{};
    uint32_t count = 1;
    const uint64_t before = host_now_ns();
    ASSERT_EQ(q->append_copy(b.ptr, a.ptr, 1 << 16, ev.events[0], {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[0]->query_synchronized_timestamps(&count, &r) == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, false);
    ASSERT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const uint64_t after = host_now_ns();
    count = 1;
    ASSERT_EQ(ev.events[0]->query_synchronized_timestamps(&count, &r), ZE_RESULT_SUCCESS);
    ASSERT_EQ(count, 1u);
    EXPECT_GE(r.global_start, before);
    EXPECT_LE(r.global_end, after);
    EXPECT_LE(r.global_start, r.global_end);
}

TEST(LevelZeroEvents, TimestampsBeforeTheSignalAreNotReady) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    Events ev(dev, 1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    hal::KernelTimestampResult r{1, 2, 3, 4};
    uint32_t count = 1;
    EXPECT_EQ(ev.events[0]->query_kernel_timestamps(&count, &r), ZE_RESULT_NOT_READY);
    EXPECT_EQ(r.global_start, 1u);
    EXPECT_EQ(r.context_end, 4u);
}

}  // namespace
}  // namespace zehal::test
