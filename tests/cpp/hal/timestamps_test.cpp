#include "hal/timestamps.hpp"

#include <gtest/gtest.h>

namespace zehal::hal {
namespace {

TEST(Timestamps, MaxOfValidBits) {
    EXPECT_EQ(timestamp_max(1), 1u);
    EXPECT_EQ(timestamp_max(32), 0xFFFFFFFFull);
    EXPECT_EQ(timestamp_max(63), 0x7FFFFFFFFFFFFFFFull);
    EXPECT_EQ(timestamp_max(64), ~0ull);
    EXPECT_EQ(timestamp_max(100), ~0ull);
}

TEST(Timestamps, TicksToNs) {
    EXPECT_EQ(ticks_to_ns(0, 19'200'000), 0u);
    EXPECT_EQ(ticks_to_ns(19'200'000, 19'200'000), 1'000'000'000u);
    // 19.2 MHz: 52.083.. ns per tick, rounded down.
    EXPECT_EQ(ticks_to_ns(1, 19'200'000), 52u);
    EXPECT_EQ(ticks_to_ns(3, 19'200'000), 156u);
    EXPECT_EQ(ticks_to_ns(1, 1'000'000'000), 1u);
    EXPECT_EQ(ticks_to_ns(7, 2'000'000'000), 3u);
    // No overflow for large tick counts.
    EXPECT_EQ(ticks_to_ns(~0ull, 1'000'000'000), ~0ull);
    EXPECT_EQ(ticks_to_ns(1ull << 40, 1'000'000), (1ull << 40) * 1000);
    EXPECT_EQ(ticks_to_ns(5, 0), 0u);
}

TEST(Timestamps, ElapsedWithoutAndAcrossAWrap) {
    EXPECT_EQ(elapsed_ticks(10, 25, 32), 15u);
    EXPECT_EQ(elapsed_ticks(7, 7, 32), 0u);
    // (max - start) + end + 1
    EXPECT_EQ(elapsed_ticks(0xFFFFFFF0u, 0x10, 32), 0x20u);
    EXPECT_EQ(elapsed_ticks(0xFFFFFFFFu, 0, 32), 1u);
    EXPECT_EQ(elapsed_ticks(250, 4, 8), 10u);
    EXPECT_EQ(elapsed_ticks(~0ull, 0, 64), 1u);
    EXPECT_EQ(elapsed_ticks(~0ull - 1, 3, 64), 5u);
}

TEST(Timestamps, WrapPeriod) {
    EXPECT_EQ(wrap_period_ns(1'000'000'000, 32), 1ull << 32);
    EXPECT_EQ(wrap_period_ns(19'200'000, 32),
              static_cast<uint64_t>((static_cast<unsigned __int128>(1) << 32) * 1'000'000'000u / 19'200'000));
    EXPECT_EQ(wrap_period_ns(1, 64), ~0ull);
    EXPECT_EQ(wrap_period_ns(0, 32), ~0ull);
}

TEST(Timestamps, SynchronizedMappingFollowsTheFormula) {
    const TimestampReference ref{1'000'000'000u, 100};
    // start = ref_host + ((start - ref_ticks) mod wrap) * period
    EXPECT_EQ(synchronized_ns(100, ref, 1'000'000, 32), 1'000'000'000u);
    EXPECT_EQ(synchronized_ns(150, ref, 1'000'000, 32), 1'000'050'000u);
    // A start tick that wrapped past the reference.
    const TimestampReference near_wrap{5'000u, 0xFFFFFFFEu};
    EXPECT_EQ(synchronized_ns(3, near_wrap, 1'000'000'000, 32), 5'000u + 5);
}

TEST(Timestamps, SynchronizedPacketAcrossAWrapAt19_2MHz) {
    const TimestampReference ref{2'000'000'000u, 0xFFFFFF00u};
    const KernelTimestampResult ticks{0xFFFFFFF0u, 0x10, 0xFFFFFFF8u, 0x8};
    const KernelTimestampResult ns = synchronize_packet(ticks, ref, 19'200'000, 32);
    EXPECT_EQ(ns.global_start, 2'000'000'000u + ticks_to_ns(0xF0, 19'200'000));
    EXPECT_EQ(ns.global_end, ns.global_start + ticks_to_ns(0x20, 19'200'000));
    EXPECT_EQ(ns.context_start, ns.global_start);
    EXPECT_EQ(ns.context_end, ns.global_start + ticks_to_ns(0x10, 19'200'000));
    EXPECT_LE(ns.global_start, ns.global_end);
}

}  // namespace
}  // namespace zehal::hal
