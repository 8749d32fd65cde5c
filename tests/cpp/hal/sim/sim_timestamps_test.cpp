// Kernel and synchronized timestamps of the sim device (contract §3).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "hal/timestamps.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

using hal::KernelTimestampResult;
using hal::MemoryKind;
using test::kHangGuardNs;
using test::Memory;

// Everything one command's timestamps must satisfy: host clock before submission <=
// synchronized start <= end <= host clock after the wait; context start = global start;
// synchronized durations are the elapsed ticks (across a wrap) times the period; kernel
// ticks fit the valid bits.
void check_packets(const hal::DeviceRef& d, const hal::EventRef& e, uint64_t host_before, uint64_t host_after,
                   uint32_t expect_packets) {
    const hal::DeviceProperties& p = d->properties();
    const uint32_t bits = p.kernel_timestamp_valid_bits;
    uint32_t n = 0;
    ASSERT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(n, expect_packets);
    std::vector<KernelTimestampResult> ticks(n);
    std::vector<KernelTimestampResult> ns(n);
    ASSERT_EQ(e->query_kernel_timestamps(&n, ticks.data()), ZE_RESULT_SUCCESS);
    uint32_t m = n;
    ASSERT_EQ(e->query_synchronized_timestamps(&m, ns.data()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(m, n);
    for (uint32_t i = 0; i < n; ++i) {
        const KernelTimestampResult& t = ticks[i];
        const KernelTimestampResult& s = ns[i];
        for (uint64_t v : {t.global_start, t.global_end, t.context_start, t.context_end})
            ASSERT_LE(v, hal::timestamp_max(bits));
        const uint64_t global_elapsed = hal::elapsed_ticks(t.global_start, t.global_end, bits);
        const uint64_t context_elapsed = hal::elapsed_ticks(t.context_start, t.context_end, bits);
        ASSERT_LE(context_elapsed, global_elapsed);
        ASSERT_LE(host_before, s.global_start) << "packet " << i;
        ASSERT_LE(s.global_start, s.global_end);
        ASSERT_LE(s.global_end, host_after) << "packet " << i;
        ASSERT_EQ(s.context_start, s.global_start);
        ASSERT_EQ(s.global_end - s.global_start, hal::ticks_to_ns(global_elapsed, p.timer_hz));
        ASSERT_EQ(s.context_end - s.context_start, hal::ticks_to_ns(context_elapsed, p.timer_hz));
        ASSERT_LE(s.context_end, s.global_end);
    }
}

// Runs `count` 64-byte copies, each with a mapped-timestamp event, checking each.
void run_commands(const hal::DeviceRef& d, int count, uint32_t packets) {
    auto q = test::queue(d);
    auto e = test::event(test::pool(d, 1, hal::kPoolKernelMappedTimestamp));
    Memory h(d, MemoryKind::host, 64);
    Memory dev(d, MemoryKind::device, 64);
    for (int i = 0; i < count; ++i) {
        ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
        const uint64_t before = host_now_ns();
        if (i % 2)
            ASSERT_EQ(q->append_copy(dev.ptr(), h.ptr(), 64, e, {}), ZE_RESULT_SUCCESS);
        else
            ASSERT_EQ(q->append_barrier(e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        const uint64_t after = host_now_ns();
        check_packets(d, e, before, after, packets);
        if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(SimTimestamps, DeviceCapabilities) {
    auto d = test::sim_device();
    EXPECT_EQ(d->properties().timestamp_flags, hal::kTimestampKernel | hal::kTimestampSynchronized);
    EXPECT_EQ(d->properties().timer_hz, 19'200'000u);
    EXPECT_EQ(d->properties().kernel_timestamp_valid_bits, 32u);
}

TEST(SimTimestamps, EveryPoolFlagCombination) {
    auto d = test::sim_device();
    std::shared_ptr<hal::EventPool> p;
    for (uint32_t flags = 0; flags <= hal::kPoolValidFlags; ++flags) {
        ASSERT_EQ(d->create_event_pool(2, flags, &p), ZE_RESULT_SUCCESS) << flags;
        EXPECT_EQ(p->flags(), flags);
        EXPECT_EQ(p->count(), 2u);
    }
}

TEST(SimTimestamps, OrderingFor1000CommandsAt19_2MHz) { run_commands(test::sim_device(), 1000, 1); }

// The clock starts just below 2^32 with 32 valid bits: the 1000 commands cross the wrap.
TEST(SimTimestamps, OrderingFor1000CommandsAcrossAForcedWrap) {
    sim::SimConfig c;
    c.kernel_timestamp_valid_bits = 32;
    c.start_ticks = (1ull << 32) - 2'000;  // ~100 µs before the wrap
    auto d = test::sim_device(c);
    run_commands(d, 1000, 1);
    uint64_t host = 0;
    uint64_t ticks = 0;
    ASSERT_EQ(d->global_timestamps(&host, &ticks), ZE_RESULT_SUCCESS);
    EXPECT_GE(ticks, 1ull << 32);  // the 64-bit global clock shows the wrap happened
}

TEST(SimTimestamps, OrderingAtOtherFrequencies) {
    for (uint64_t hz : {1'000'000'000ull, 3'000'000'000ull, 1'000'000ull, 12'345'678ull}) {
        sim::SimConfig c;
        c.timer_hz = hz;
        run_commands(test::sim_device(c), 50, 1);
        if (::testing::Test::HasFatalFailure()) return;
    }
    sim::SimConfig narrow;
    narrow.kernel_timestamp_valid_bits = 20;  // wraps every 55 ms at 19.2 MHz
    run_commands(test::sim_device(narrow), 200, 1);
}

// One long command that spans the wrap: kernel end < start, and the durations are right.
TEST(SimTimestamps, DurationAcrossAForcedWrap) {
    constexpr uint64_t kHz = 19'200'000;
    constexpr uint64_t kBandwidth = 100'000'000;  // 10 ns per byte
    bool spanned = false;
    for (uint64_t lead_ms = 20; lead_ms <= 640 && !spanned; lead_ms *= 2) {
        sim::SimConfig c;
        c.bandwidth_bytes_per_s = kBandwidth;
        c.start_ticks = (1ull << 32) - kHz * lead_ms / 1000;
        auto d = test::sim_device(c);
        auto q = test::queue(d);
        auto e = test::event(test::pool(d, 1, hal::kPoolKernelMappedTimestamp));
        uint64_t host = 0;
        uint64_t now = 0;
        ASSERT_EQ(d->global_timestamps(&host, &now), ZE_RESULT_SUCCESS);  // 64 valid bits: unmasked
        if (now >= (1ull << 32)) continue;                                // too slow to start: lead more
        const uint64_t left_ns = ((1ull << 32) - now) * 1'000'000'000ull / kHz;
        const uint64_t run_ns = left_ns + 20'000'000;
        const size_t bytes = static_cast<size_t>(run_ns * kBandwidth / 1'000'000'000ull);
        Memory src(d, MemoryKind::host, bytes);
        Memory dst(d, MemoryKind::device, bytes);
        const uint64_t before = host_now_ns();
        ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), bytes, e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        const uint64_t after = host_now_ns();
        check_packets(d, e, before, after, 1);
        KernelTimestampResult t{};
        uint32_t n = 1;
        ASSERT_EQ(e->query_kernel_timestamps(&n, &t), ZE_RESULT_SUCCESS);
        if (t.global_end >= t.global_start) continue;  // started after the wrap: lead more
        spanned = true;
        KernelTimestampResult s{};
        ASSERT_EQ(e->query_synchronized_timestamps(&n, &s), ZE_RESULT_SUCCESS);
        // The copy lasted at least its throttled time; the duration across the wrap says so.
        const uint64_t throttled = static_cast<uint64_t>(bytes) * 1'000'000'000ull / kBandwidth;
        EXPECT_GE(s.global_end - s.global_start + 3 * 1'000'000'000ull / kHz, throttled);
        EXPECT_LE(s.global_end - s.global_start, after - before);
        EXPECT_EQ(s.global_end - s.global_start,
                  hal::ticks_to_ns((0xFFFFFFFFull - t.global_start) + t.global_end + 1, kHz));
    }
    EXPECT_TRUE(spanned);
}

// 16 valid bits wrap every 3.4 ms at 19.2 MHz: a command held 10 ms by a wait event starts
// several wraps after its submission and still maps to the right host time.
TEST(SimTimestamps, CommandStartingWrapsAfterItsSubmission) {
    sim::SimConfig c;
    c.kernel_timestamp_valid_bits = 16;
    auto d = test::sim_device(c);
    auto q = test::queue(d);
    auto p = test::pool(d, 2, hal::kPoolKernelMappedTimestamp);
    auto gate = test::event(p, 0);
    auto e = test::event(p, 1);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q->append_barrier(e, waits), ZE_RESULT_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const uint64_t released = host_now_ns();
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    check_packets(d, e, released, host_now_ns(), 1);
}

TEST(SimTimestamps, CountSemanticsWithSubdevices) {
    sim::SimConfig c;
    c.subdevices = 4;
    auto d = test::sim_device(c);
    run_commands(d, 100, 4);
    auto q = test::queue(d);
    auto e = test::event(test::pool(d, 1, hal::kPoolKernelMappedTimestamp));
    Memory src(d, MemoryKind::host, 1u << 20);
    Memory dst(d, MemoryKind::device, 1u << 20);
    ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), 1u << 20, e, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const KernelTimestampResult sentinel{~0ull, ~0ull, ~0ull, ~0ull};
    KernelTimestampResult all[6];
    std::fill(std::begin(all), std::end(all), sentinel);
    uint32_t n = 0;
    ASSERT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 4u);
    n = 6;  // larger: corrected
    ASSERT_EQ(e->query_kernel_timestamps(&n, all), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 4u);
    EXPECT_EQ(all[4].global_start, ~0ull);
    KernelTimestampResult two[3] = {sentinel, sentinel, sentinel};
    n = 2;  // smaller: the first ones
    ASSERT_EQ(e->query_kernel_timestamps(&n, two), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(two[0].global_start, all[0].global_start);
    EXPECT_EQ(two[1].global_end, all[1].global_end);
    EXPECT_EQ(two[2].global_start, ~0ull);
    n = 2;
    ASSERT_EQ(e->query_synchronized_timestamps(&n, two), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 2u);
    n = 0;
    ASSERT_EQ(e->query_synchronized_timestamps(&n, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 4u);
}

TEST(SimTimestamps, NotReadyLeavesTheDestinationUntouched) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    auto p = test::pool(d, 2, hal::kPoolKernelMappedTimestamp);
    auto gate = test::event(p, 0);
    auto e = test::event(p, 1);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q->append_barrier(e, waits), ZE_RESULT_SUCCESS);
    const KernelTimestampResult sentinel{11, 22, 33, 44};
    KernelTimestampResult out[2] = {sentinel, sentinel};
    uint32_t n = 2;
    EXPECT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->query_synchronized_timestamps(&n, out), ZE_RESULT_NOT_READY);
    EXPECT_EQ(n, 2u);
    n = 0;
    EXPECT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_NOT_READY);
    EXPECT_EQ(n, 0u);
    for (const KernelTimestampResult& r : out) {
        EXPECT_EQ(r.global_start, 11u);
        EXPECT_EQ(r.global_end, 22u);
        EXPECT_EQ(r.context_start, 33u);
        EXPECT_EQ(r.context_end, 44u);
    }
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    n = 2;
    ASSERT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
    EXPECT_LE(out[0].global_start, out[0].global_end);
    EXPECT_EQ(out[1].global_start, 11u);
}

TEST(SimTimestamps, PoolsWithoutTimestampFlags) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    auto plain = test::event(test::pool(d, 1, hal::kPoolHostVisible));
    auto kernel = test::event(test::pool(d, 1, hal::kPoolKernelTimestamp));
    ASSERT_EQ(q->append_barrier(plain, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_barrier(kernel, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    KernelTimestampResult r{};
    uint32_t n = 1;
    EXPECT_EQ(plain->query_kernel_timestamps(&n, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(plain->query_synchronized_timestamps(&n, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(kernel->query_synchronized_timestamps(&n, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    ASSERT_EQ(kernel->query_kernel_timestamps(&n, &r), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
    EXPECT_LE(r.global_start, r.global_end);
    EXPECT_LE(r.context_start, r.context_end);
}

// After a reset and a new submission, timestamps are not earlier than the previous ones.
TEST(SimTimestamps, ResetAndResubmitIsNotEarlier) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    auto e = test::event(test::pool(d, 1, hal::kPoolKernelMappedTimestamp));
    KernelTimestampResult prev_ticks{};
    KernelTimestampResult prev_ns{};
    for (int i = 0; i < 200; ++i) {
        ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_barrier(e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        KernelTimestampResult t{};
        KernelTimestampResult s{};
        uint32_t n = 1;
        ASSERT_EQ(e->query_kernel_timestamps(&n, &t), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->query_synchronized_timestamps(&n, &s), ZE_RESULT_SUCCESS);
        ASSERT_GE(t.global_start, prev_ticks.global_end);
        ASSERT_GE(t.context_start, prev_ticks.context_end);
        ASSERT_GE(s.global_start, prev_ns.global_end);
        ASSERT_GE(s.context_start, prev_ns.context_end);
        prev_ticks = t;
        prev_ns = s;
    }
}

TEST(SimTimestamps, KernelTicksFitTheValidBits) {
    sim::SimConfig c;
    c.kernel_timestamp_valid_bits = 8;  // wraps every 13 µs
    c.timer_hz = 19'200'000;
    auto d = test::sim_device(c);
    auto q = test::queue(d);
    auto e = test::event(test::pool(d, 1, hal::kPoolKernelTimestamp));
    for (int i = 0; i < 100; ++i) {
        ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_barrier(e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        KernelTimestampResult t{};
        uint32_t n = 1;
        ASSERT_EQ(e->query_kernel_timestamps(&n, &t), ZE_RESULT_SUCCESS);
        for (uint64_t v : {t.global_start, t.global_end, t.context_start, t.context_end}) ASSERT_LE(v, 255u);
    }
}

TEST(SimTimestamps, HostSignalledTimestampEvent) {
    auto d = test::sim_device();
    auto e = test::event(test::pool(d, 1, hal::kPoolKernelMappedTimestamp));
    const uint64_t before = host_now_ns();
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    const uint64_t after = host_now_ns();
    KernelTimestampResult s{};
    uint32_t n = 1;
    ASSERT_EQ(e->query_synchronized_timestamps(&n, &s), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
    EXPECT_LE(before, s.global_start);
    EXPECT_LE(s.global_end, after);
}

// Several threads query one event while it is pending and after; each sees NOT_READY or the
// same complete result.
TEST(SimTimestamps, ConcurrentQueriesOfOneEvent) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 16u << 20;
    c.subdevices = 2;
    auto d = test::sim_device(c);
    auto q = test::queue(d);
    auto e = test::event(test::pool(d, 1, hal::kPoolKernelMappedTimestamp));
    Memory src(d, MemoryKind::host, 128u << 10);
    Memory dst(d, MemoryKind::device, 128u << 10);
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    std::vector<std::array<KernelTimestampResult, 2>> seen(4);
    for (int t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            while (!go.load()) std::this_thread::yield();
            for (;;) {
                std::array<KernelTimestampResult, 2> out{};
                uint32_t n = 2;
                const ze_result_t r = t % 2 ? e->query_kernel_timestamps(&n, out.data())
                                            : e->query_synchronized_timestamps(&n, out.data());
                if (r == ZE_RESULT_NOT_READY) continue;
                ASSERT_EQ(r, ZE_RESULT_SUCCESS);
                ASSERT_EQ(n, 2u);
                seen[t] = out;
                break;
            }
        });
    }
    go = true;
    ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), 128u << 10, e, {}), ZE_RESULT_SUCCESS);
    for (auto& t : threads) t.join();
    EXPECT_EQ(std::memcmp(&seen[1], &seen[3], sizeof seen[1]), 0);
    EXPECT_EQ(std::memcmp(&seen[0], &seen[2], sizeof seen[0]), 0);
}

TEST(SimTimestamps, GlobalTimestampsFromManyThreads) {
    sim::SimConfig c;
    c.timestamp_valid_bits = 64;
    auto d = test::sim_device(c);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&] {
            uint64_t last_host = 0;
            uint64_t last_ticks = 0;
            for (int i = 0; i < 5000; ++i) {
                uint64_t host = 0;
                uint64_t ticks = 0;
                ASSERT_EQ(d->global_timestamps(&host, &ticks), ZE_RESULT_SUCCESS);
                ASSERT_GE(host, last_host);
                ASSERT_GE(ticks, last_ticks);
                last_host = host;
                last_ticks = ticks;
            }
        });
    for (auto& t : threads) t.join();
}

// Timestamp events used by commands on every engine at once.
TEST(SimTimestamps, ManyEnginesAndThreads) {
    sim::SimConfig c;
    c.copy_engines = 2;
    c.compute_engines = 2;
    auto d = test::sim_device(c);
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            auto q = test::queue(d, t / 2, t % 2);
            auto e = test::event(test::pool(d, 1, hal::kPoolKernelMappedTimestamp));
            for (int i = 0; i < 200; ++i) {
                ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
                const uint64_t before = host_now_ns();
                ASSERT_EQ(q->append_barrier(e, {}), ZE_RESULT_SUCCESS);
                ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
                check_packets(d, e, before, host_now_ns(), 1);
                if (::testing::Test::HasFatalFailure()) return;
            }
        });
    for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace zehal
