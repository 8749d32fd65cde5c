// The timestamp contract (contract §3): global timestamps sampled together and monotonic in
// host time; kernel timestamps of a command valid (count rules, not ready before the
// signal, within the valid bits) and, synchronized, between the host reads around it.
#include "common/clock.hpp"
#include "contract_fixture.hpp"
#include "hal/timestamps.hpp"

namespace zehal::test::contract {
namespace {

// Skips the test unless the device has every TimestampCapability bit of `flags`.
#define ZEHAL_REQUIRE_TIMESTAMPS(flags)                               \
    if ((device_->properties().timestamp_flags & (flags)) != (flags)) \
    GTEST_SKIP() << "device without these timestamp capabilities: " << (flags)

TEST_P(TimestampContract, GlobalTimestampsAreSampledTogetherAndMonotonic) {
    uint64_t host = 0, ticks = 0;
    EXPECT_EQ(device_->global_timestamps(nullptr, &ticks), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->global_timestamps(&host, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    const uint32_t bits = device_->properties().timestamp_valid_bits;
    const uint64_t max_ticks = hal::timestamp_max(bits);
    uint64_t previous = 0, previous_ticks = 0;
    ASSERT_EQ(device_->global_timestamps(&previous, &previous_ticks), ZE_RESULT_SUCCESS);
    for (int i = 0; i < 100; ++i) {
        const uint64_t before = host_now_ns();
        ASSERT_EQ(device_->global_timestamps(&host, &ticks), ZE_RESULT_SUCCESS);
        const uint64_t after = host_now_ns();
        EXPECT_LE(before, host);
        EXPECT_LE(host, after);
        EXPECT_LE(previous, host);
        EXPECT_LE(ticks, max_ticks);
        // Forward, across a wrap too: a step back would be most of a wrap period forward.
        EXPECT_LE(hal::elapsed_ticks(previous_ticks, ticks, bits), max_ticks / 2);
        previous = host;
        previous_ticks = ticks;
    }
}

TEST_P(TimestampContract, KernelTimestampsFollowTheCountRulesAndTheValidBits) {
    ZEHAL_REQUIRE_TIMESTAMPS(hal::kTimestampKernel);
    auto q = queue();
    EventSet ev(device_, 1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    const hal::EventRef e = ev.events[0];
    Allocation a(device_, hal::MemoryKind::host, 1 << 16), b(device_, hal::MemoryKind::device, 1 << 16);

    // Not signalled: NOT_READY and the destination untouched.
    hal::KernelTimestampResult untouched{1, 2, 3, 4};
    uint32_t count = 1;
    EXPECT_EQ(e->query_kernel_timestamps(&count, &untouched), ZE_RESULT_NOT_READY);
    EXPECT_EQ(untouched.global_start, 1u);
    EXPECT_EQ(untouched.context_end, 4u);

    ASSERT_EQ(q->append_copy(b.ptr(), a.ptr(), 1 << 16, e, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    uint32_t packets = 0;
    ASSERT_EQ(e->query_kernel_timestamps(&packets, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_GE(packets, 1u);
    std::vector<hal::KernelTimestampResult> all(packets + 2);
    uint32_t larger = packets + 2;
    ASSERT_EQ(e->query_kernel_timestamps(&larger, all.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(larger, packets);  // corrected
    const uint64_t max = hal::timestamp_max(device_->properties().kernel_timestamp_valid_bits);
    for (uint32_t i = 0; i < packets; ++i) {
        SCOPED_TRACE(testing::Message() << "packet " << i);
        EXPECT_LE(all[i].global_start, max);
        EXPECT_LE(all[i].global_end, max);
        EXPECT_LE(all[i].context_start, max);
        EXPECT_LE(all[i].context_end, max);
    }
    hal::KernelTimestampResult first{};
    uint32_t one = 1;
    ASSERT_EQ(e->query_kernel_timestamps(&one, &first), ZE_RESULT_SUCCESS);
    EXPECT_EQ(one, 1u);
    EXPECT_EQ(first.global_start, all[0].global_start);
    EXPECT_EQ(first.global_end, all[0].global_end);
}

TEST_P(TimestampContract, SynchronizedTimestampsFallBetweenSubmissionAndCompletion) {
    ZEHAL_REQUIRE_TIMESTAMPS(hal::kTimestampKernel | hal::kTimestampSynchronized);
    auto q = queue();
    EventSet ev(device_, 1, hal::kPoolHostVisible | hal::kPoolKernelMappedTimestamp);
    const hal::EventRef e = ev.events[0];
    Allocation a(device_, hal::MemoryKind::host, 4096), b(device_, hal::MemoryKind::device, 4096);
    for (int i = 0; i < 200; ++i) {
        SCOPED_TRACE(testing::Message() << "command " << i);
        ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
        const uint64_t before = host_now_ns();
        ASSERT_EQ(q->append_copy(i % 2 ? a.ptr() : b.ptr(), i % 2 ? b.ptr() : a.ptr(), 4096, e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        const uint64_t after = host_now_ns();
        uint32_t packets = 0;
        ASSERT_EQ(e->query_synchronized_timestamps(&packets, nullptr), ZE_RESULT_SUCCESS);
        ASSERT_GE(packets, 1u);
        std::vector<hal::KernelTimestampResult> ts(packets);
        ASSERT_EQ(e->query_synchronized_timestamps(&packets, ts.data()), ZE_RESULT_SUCCESS);
        for (const hal::KernelTimestampResult& t : ts) {
            ASSERT_LE(before, t.global_start);
            ASSERT_LE(t.global_start, t.global_end);
            ASSERT_LE(t.global_end, after);
            ASSERT_EQ(t.context_start, t.global_start);
            ASSERT_LE(t.context_start, t.context_end);
        }
    }
}

}  // namespace
}  // namespace zehal::test::contract
