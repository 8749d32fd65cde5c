// Commands of one sim device signal another sim device's events (docs/devices.md, "Events and
// timestamps"): plain and timestamp events, kernel timestamps in the event's device's ticks,
// synchronized timestamps ordered as contract §3 says, engines of the event's device woken,
// resets, timestamp queries and cancels of such events, and a lost event device.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "hal/timestamps.hpp"
#include "support/in_child.hpp"
#include "support/sim_fixture.hpp"

namespace zehal::test {
namespace {

using hal::MemoryKind;

// Two sim devices whose clocks differ in frequency and start: ticks of one are far from the
// other's (b's clock starts 2^40 ticks ahead and runs at a tenth of a's frequency).
struct TwoClocks {
    hal::DeviceRef a;
    hal::DeviceRef b;
    TwoClocks() {
        sim::SimConfig ca;
        ca.kernel_timestamp_valid_bits = 64;
        sim::SimConfig cb = ca;
        cb.timer_hz = ca.timer_hz / 10;
        cb.start_ticks = 1ull << 40;
        a = sim_device(ca);
        b = sim_device(cb);
    }
};

// A copy on a's engine signals b's event; b's engine waits for it, then signals b's own
// (in a child: a signal that never comes would hang the waiting engine).
TEST(SimPeerSignal, ACommandSignalsAnotherDevicesEvent) {
    in_child([] {
        auto a = sim_device();
        auto b = sim_device();
        EXPECT_TRUE(a->signals_event(*event(pool(b, 1))));
        Memory on_a(a, MemoryKind::device, 4096);
        Memory on_b(b, MemoryKind::device, 4096);
        Memory host(a, MemoryKind::host, 4096);
        std::memset(host.ptr(), 0x5A, 4096);
        auto of_b = pool(b, 2);
        const hal::EventRef copied = event(of_b, 0);
        const hal::EventRef done = event(of_b, 1);
        auto gate = event(pool(a, 1));
        const hal::EventRef wait_gate[] = {gate};
        const hal::EventRef wait_copied[] = {copied};
        // b's engine waits for its own event, which only a's command signals: b's domain must
        // wake it (no poll is due for an event of its own device).
        auto qb = queue(b);
        ASSERT_EQ(qb->append_copy(on_b.ptr(), on_a.ptr(), 4096, done, wait_copied), ZE_RESULT_SUCCESS);
        auto qa = queue(a);
        ASSERT_EQ(qa->append_copy(on_a.ptr(), host.ptr(), 4096, copied, wait_gate), ZE_RESULT_SUCCESS);
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        EXPECT_EQ(copied->query(), ZE_RESULT_NOT_READY);
        ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
        ASSERT_EQ(done->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_EQ(copied->query(), ZE_RESULT_SUCCESS);
        Memory back(b, MemoryKind::host, 4096);
        ASSERT_EQ(qb->append_copy(back.ptr(), on_b.ptr(), 4096, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(qb->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_EQ(std::vector<unsigned char>(back.get(), back.get() + 4096), std::vector<unsigned char>(4096, 0x5A));
        // Barriers signal it too; the host still resets and signals it.
        ASSERT_EQ(copied->host_reset(), ZE_RESULT_SUCCESS);
        ASSERT_EQ(qa->append_barrier(copied, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(copied->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        ASSERT_EQ(copied->host_reset(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(copied->query(), ZE_RESULT_NOT_READY);
        ASSERT_EQ(copied->host_signal(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(copied->query(), ZE_RESULT_SUCCESS);
    });
}

// A's command timestamps b's event in b's ticks: between b's clock read before the submission
// and after the wait, and its synchronized timestamps within the host's readings.
TEST(SimPeerSignal, KernelTimestampsAreInTheEventDevicesTicks) {
    TwoClocks d;
    constexpr size_t kBytes = 1u << 20;
    Memory src(d.a, MemoryKind::device, kBytes);
    Memory dst(d.b, MemoryKind::device, kBytes);
    auto q = queue(d.a);
    for (uint32_t flags : {hal::kPoolKernelTimestamp, hal::kPoolKernelMappedTimestamp}) {
        SCOPED_TRACE(flags);
        auto stamped = event(pool(d.b, 1, flags));
        uint64_t host_before = 0, ticks_before = 0, host_after = 0, ticks_after = 0;
        ASSERT_EQ(d.b->global_timestamps(&host_before, &ticks_before), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), kBytes, stamped, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(stamped->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        ASSERT_EQ(d.b->global_timestamps(&host_after, &ticks_after), ZE_RESULT_SUCCESS);
        uint32_t count = 0;
        ASSERT_EQ(stamped->query_kernel_timestamps(&count, nullptr), ZE_RESULT_SUCCESS);
        ASSERT_EQ(count, 1u);
        hal::KernelTimestampResult ts{};
        ASSERT_EQ(stamped->query_kernel_timestamps(&count, &ts), ZE_RESULT_SUCCESS);
        EXPECT_GE(ts.global_start, ticks_before);
        EXPECT_LE(ts.global_start, ts.global_end);
        EXPECT_LE(ts.global_end, ticks_after);
        EXPECT_EQ(ts.context_start, ts.global_start);
        EXPECT_EQ(ts.context_end, ts.global_end);
        if (flags != hal::kPoolKernelMappedTimestamp) continue;
        hal::KernelTimestampResult sync{};
        count = 1;
        ASSERT_EQ(stamped->query_synchronized_timestamps(&count, &sync), ZE_RESULT_SUCCESS);
        EXPECT_LE(host_before, sync.global_start);
        EXPECT_LE(sync.global_start, sync.global_end);
        EXPECT_LE(sync.global_end, host_after);
    }
}

// Timestamp commands of either device signal events of the other, back and forth, many times:
// every interval lies within the host's readings around it (contract §3 ordering).
TEST(SimPeerSignal, SynchronizedTimestampsKeepTheirOrderingBothWays) {
    TwoClocks d;
    auto qa = queue(d.a, hal::kComputeOrdinal);
    auto qb = queue(d.b, hal::kComputeOrdinal);
    auto of_a = event(pool(d.a, 1, hal::kPoolKernelMappedTimestamp));
    auto of_b = event(pool(d.b, 1, hal::kPoolKernelMappedTimestamp));
    for (int round = 0; round < 200; ++round) {
        const bool a_runs = round % 2 == 0;
        const auto& q = a_runs ? qa : qb;
        const hal::EventRef& e = a_runs ? of_b : of_a;
        ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
        const uint64_t before = host_now_ns();
        ASSERT_EQ(q->append_barrier(e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        const uint64_t after = host_now_ns();
        uint32_t count = 1;
        hal::KernelTimestampResult sync{};
        ASSERT_EQ(e->query_synchronized_timestamps(&count, &sync), ZE_RESULT_SUCCESS);
        ASSERT_LE(before, sync.global_start) << round;
        ASSERT_LE(sync.global_start, sync.global_end) << round;
        ASSERT_LE(sync.global_end, after) << round;
    }
}

// B's queue resets a's event and writes its kernel timestamps to memory, in queue order.
TEST(SimPeerSignal, AnotherDevicesQueueResetsAndQueriesTheEvent) {
    TwoClocks d;
    auto stamped = event(pool(d.a, 1, hal::kPoolKernelTimestamp));
    auto qa = queue(d.a);
    ASSERT_EQ(qa->append_barrier(stamped, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(stamped->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    hal::KernelTimestampResult expected{};
    uint32_t count = 1;
    ASSERT_EQ(stamped->query_kernel_timestamps(&count, &expected), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(d.b->signals_event(*stamped));
    Memory out(d.b, MemoryKind::host, 2 * sizeof(hal::KernelTimestampResult));
    std::memset(out.ptr(), 0xFF, 2 * sizeof(hal::KernelTimestampResult));
    const hal::EventRef queried[] = {stamped};
    auto qb = queue(d.b);
    ASSERT_EQ(qb->append_query_kernel_timestamps(queried, out.ptr(), nullptr, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(qb->append_event_reset(stamped), ZE_RESULT_SUCCESS);
    ASSERT_EQ(
        qb->append_query_kernel_timestamps(queried, out.get<hal::KernelTimestampResult>() + 1, nullptr, nullptr, {}),
        ZE_RESULT_SUCCESS);
    ASSERT_EQ(qb->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const auto* written = out.get<hal::KernelTimestampResult>();
    EXPECT_EQ(std::memcmp(&written[0], &expected, sizeof expected), 0);
    const hal::KernelTimestampResult zeros{};
    EXPECT_EQ(std::memcmp(&written[1], &zeros, sizeof zeros), 0);  // reset: no packet
    EXPECT_EQ(stamped->query(), ZE_RESULT_NOT_READY);
}

// A command that signals another device's event is taken back like any other: the event is
// signalled without timestamps.
TEST(SimPeerSignal, CancelTakesBackACommandSignallingAnotherDevicesEvent) {
    auto a = sim_device();
    auto b = sim_device();
    auto gate = event(pool(a, 1));
    auto first = event(pool(b, 1, hal::kPoolKernelTimestamp));
    auto second = event(pool(b, 1, hal::kPoolKernelTimestamp));
    const hal::EventRef waits[] = {gate};
    auto q = queue(a);
    ASSERT_EQ(q->append_barrier(first, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_barrier(second, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->cancel(second), ZE_RESULT_SUCCESS);
    EXPECT_EQ(second->query(), ZE_RESULT_SUCCESS);
    uint32_t count = 0;
    ASSERT_EQ(second->query_kernel_timestamps(&count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(first->query(), ZE_RESULT_NOT_READY);
    count = 0;
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(first->query(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(first->query_kernel_timestamps(&count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 1u);
}

// The event's device is lost: an append that would signal, reset or query its event is
// DEVICE_LOST; a command queued before the loss still runs and its signal is dropped; one
// waiting for another of its events goes on; the running device stays usable.
TEST(SimPeerSignal, ALostEventDeviceDropsTheSignal) {
    in_child([] {
        auto a = sim_device();
        auto b = sim_device();
        auto gate = event(pool(a, 1));
        auto of_b = event(pool(b, 1, hal::kPoolKernelTimestamp));
        auto never = event(pool(b, 1));
        Memory dst(a, MemoryKind::device, 4096);
        Memory src(a, MemoryKind::host, 4096);
        std::memset(src.ptr(), 0x3C, 4096);
        const hal::EventRef waits[] = {gate};
        const hal::EventRef waits_never[] = {never};
        auto q = queue(a);
        auto waiting = queue(a, hal::kComputeOrdinal);
        ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), 4096, of_b, waits), ZE_RESULT_SUCCESS);
        ASSERT_EQ(waiting->append_barrier(nullptr, waits_never), ZE_RESULT_SUCCESS);
        ASSERT_EQ(b->lose(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(q->append_barrier(of_b, {}), ZE_RESULT_ERROR_DEVICE_LOST);
        EXPECT_EQ(q->append_event_reset(of_b), ZE_RESULT_ERROR_DEVICE_LOST);
        const hal::EventRef queried[] = {of_b};
        EXPECT_EQ(q->append_query_kernel_timestamps(queried, dst.ptr(), nullptr, nullptr, {}),
                  ZE_RESULT_ERROR_DEVICE_LOST);
        ASSERT_EQ(waiting->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_EQ(of_b->host_synchronize(kHangGuardNs), ZE_RESULT_ERROR_DEVICE_LOST);
        ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_EQ(of_b->query(), ZE_RESULT_ERROR_DEVICE_LOST);
        Memory back(a, MemoryKind::host, 4096);
        ASSERT_EQ(q->append_copy(back.ptr(), dst.ptr(), 4096, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_EQ(back.get()[4095], 0x3C);
    });
}

// The event's device goes away while a command that signals its event is queued: the event
// (kept alive by its references) is signalled, with the gone device's ticks.
TEST(SimPeerSignal, TheEventOutlivesItsDevice) {
    in_child([] {
        auto a = sim_device();
        auto b = sim_device();
        auto gate = event(pool(a, 1));
        auto of_b = event(pool(b, 1, hal::kPoolKernelMappedTimestamp));
        const hal::EventRef waits[] = {gate};
        auto q = queue(a);
        ASSERT_EQ(q->append_barrier(of_b, waits), ZE_RESULT_SUCCESS);
        b.reset();
        ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
        ASSERT_EQ(of_b->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        uint32_t count = 1;
        hal::KernelTimestampResult sync{};
        ASSERT_EQ(of_b->query_synchronized_timestamps(&count, &sync), ZE_RESULT_SUCCESS);
        EXPECT_EQ(count, 1u);
        EXPECT_LE(sync.global_start, sync.global_end);
    });
}

}  // namespace
}  // namespace zehal::test
