// Queues of the sim device: asynchronous completion, order, engines, threads, waits,
// barriers, cancel, and every bad input.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>
#include <vector>

#include "hal/sim/sim_device.hpp"
#include "support/foreign_event.hpp"
#include "support/sim_fixture.hpp"
#include "support/queued_steps.hpp"

namespace zehal {
namespace {

using hal::MemoryKind;
using test::kHangGuardNs;
using test::Memory;

// Fills host memory with bytes derived from `seed`.
void pattern(void* p, size_t n, uint32_t seed) {
    auto* b = static_cast<unsigned char*>(p);
    for (size_t i = 0; i < n; ++i) b[i] = static_cast<unsigned char>((i * 131 + seed * 7 + (i >> 8)) & 0xFF);
}

// Kernel timestamps (ticks) of a signalled timestamp event's first packet.
hal::KernelTimestampResult ticks_of(const hal::EventRef& e) {
    hal::KernelTimestampResult r{};
    uint32_t n = 1;
    EXPECT_EQ(e->query_kernel_timestamps(&n, &r), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
    return r;
}

TEST(SimQueue, CopyWithinOneAllocationAndAtOffsets) {
    auto d = test::sim_device();
    Memory dev(d, MemoryKind::device, 8192);
    Memory host(d, MemoryKind::host, 8192);
    Memory out(d, MemoryKind::host, 8192);
    pattern(host.ptr(), 8192, 3);
    auto q = test::queue(d);
    ASSERT_EQ(q->append_copy(dev.get() + 100, host.get() + 7, 4000, nullptr, {}), ZE_RESULT_SUCCESS);
    // Adjacent, not overlapping, inside one allocation.
    ASSERT_EQ(q->append_copy(dev.get() + 4100, dev.get() + 100, 4000, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(out.ptr(), dev.get() + 4100, 4000, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(out.ptr(), host.get() + 7, 4000), 0);
}

TEST(SimQueue, FillEveryPatternSize) {
    auto d = test::sim_device();
    auto q = test::queue(d, hal::kComputeOrdinal);
    Memory dev(d, MemoryKind::device, 1u << 18);
    Memory out(d, MemoryKind::host, 1u << 18);
    unsigned char pat[128];
    for (size_t i = 0; i < sizeof pat; ++i) pat[i] = static_cast<unsigned char>(i * 3 + 1);
    for (size_t psize = 1; psize <= 128; psize *= 2) {
        for (size_t size : {psize, psize * 3, size_t{1} << 18}) {
            std::memset(out.ptr(), 0xEE, 1u << 18);
            ASSERT_EQ(q->append_fill(dev.ptr(), pat, psize, size, nullptr, {}), ZE_RESULT_SUCCESS);
            ASSERT_EQ(q->append_copy(out.ptr(), dev.ptr(), size, nullptr, {}), ZE_RESULT_SUCCESS);
            ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
            for (size_t i = 0; i < size; ++i) ASSERT_EQ(out.get()[i], pat[i % psize]) << psize << " " << i;
        }
    }
    // The pattern is copied at submission: changing it afterwards changes nothing.
    unsigned char one = 0x42;
    Memory host(d, MemoryKind::host, 64);
    ASSERT_EQ(q->append_fill(host.ptr(), &one, 1, 64, nullptr, {}), ZE_RESULT_SUCCESS);
    one = 0;
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(host.get()[63], 0x42);
}

// With the throttle, a copy takes long: append returns at once, the event follows later.
TEST(SimQueue, CompletesAsynchronously) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 1u << 20;  // 64 KiB take ~62 ms
    auto d = test::sim_device(c);
    Memory src(d, MemoryKind::host, 64u << 10);
    Memory dst(d, MemoryKind::device, 64u << 10);
    auto q = test::queue(d);
    auto e = test::event(test::pool(d, 1));
    ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), 64u << 10, e, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_NOT_READY);
    ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
}

// A chain of copies through 16 buffers: only in-order execution gives the right bytes;
// when the last event is signalled every earlier one is too.
TEST(SimQueue, OrderWithinAQueue) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 256u << 20;
    auto d = test::sim_device(c);
    constexpr size_t kSize = 64u << 10;
    constexpr int kHops = 16;
    Memory src(d, MemoryKind::host, kSize);
    Memory out(d, MemoryKind::host, kSize);
    std::vector<std::unique_ptr<Memory>> hops;
    for (int i = 0; i < kHops; ++i) hops.push_back(std::make_unique<Memory>(d, MemoryKind::device, kSize));
    pattern(src.ptr(), kSize, 11);
    auto q = test::queue(d);
    auto p = test::pool(d, kHops + 1);
    std::vector<hal::EventRef> events;
    for (int i = 0; i <= kHops; ++i) events.push_back(test::event(p, i));
    ASSERT_EQ(q->append_copy(hops[0]->ptr(), src.ptr(), kSize, events[0], {}), ZE_RESULT_SUCCESS);
    for (int i = 1; i < kHops; ++i)
        ASSERT_EQ(q->append_copy(hops[i]->ptr(), hops[i - 1]->ptr(), kSize, events[i], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(out.ptr(), hops[kHops - 1]->ptr(), kSize, events[kHops], {}), ZE_RESULT_SUCCESS);
    // Watch the events: each one seen signalled implies every earlier one is.
    int seen = -1;
    while (seen < kHops) {
        for (int i = kHops; i > seen; --i) {
            if (events[i]->query() == ZE_RESULT_SUCCESS) {
                for (int j = 0; j < i; ++j) ASSERT_EQ(events[j]->query(), ZE_RESULT_SUCCESS) << j << " before " << i;
                seen = i;
                break;
            }
        }
    }
    EXPECT_EQ(std::memcmp(out.ptr(), src.ptr(), kSize), 0);
}

// Two copy engines run at once: their kernel timestamps overlap. And an engine held up by an
// event that nobody signals does not hold up another engine.
TEST(SimQueue, EnginesRunConcurrently) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 4u << 20;  // 256 KiB: ~62 ms each
    c.copy_engines = 2;
    auto d = test::sim_device(c);
    constexpr size_t kSize = 256u << 10;
    Memory s0(d, MemoryKind::host, kSize);
    Memory s1(d, MemoryKind::host, kSize);
    Memory d0(d, MemoryKind::device, kSize);
    Memory d1(d, MemoryKind::device, kSize);
    auto q0 = test::queue(d, hal::kCopyOrdinal, 0);
    auto q1 = test::queue(d, hal::kCopyOrdinal, 1);
    auto p = test::pool(d, 2, hal::kPoolKernelTimestamp);
    auto e0 = test::event(p, 0);
    auto e1 = test::event(p, 1);
    ASSERT_EQ(q0->append_copy(d0.ptr(), s0.ptr(), kSize, e0, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q1->append_copy(d1.ptr(), s1.ptr(), kSize, e1, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e0->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    ASSERT_EQ(e1->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const auto t0 = ticks_of(e0);
    const auto t1 = ticks_of(e1);
    EXPECT_LT(t0.global_start, t1.global_end);
    EXPECT_LT(t1.global_start, t0.global_end);

    auto gate = test::event(test::pool(d, 1));
    auto done = test::event(test::pool(d, 1));
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q0->append_barrier(nullptr, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q1->append_barrier(done, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(done->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q0->host_synchronize(0), ZE_RESULT_NOT_READY);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q0->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

// Two queues on one engine: a queue waiting for an event does not hold up the other.
TEST(SimQueue, QueuesOfOneEngineAreIndependent) {
    auto d = test::sim_device();
    auto a = test::queue(d, hal::kCopyOrdinal, 0);
    auto b = test::queue(d, hal::kCopyOrdinal, 0);
    auto gate = test::event(test::pool(d, 1));
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(a->append_barrier(nullptr, waits), ZE_RESULT_SUCCESS);
    Memory m(d, MemoryKind::host, 64);
    const unsigned char v = 7;
    ASSERT_EQ(b->append_fill(m.ptr(), &v, 1, 64, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(b->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(m.get()[10], 7);
    EXPECT_EQ(a->host_synchronize(1'000'000), ZE_RESULT_NOT_READY);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(a->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

// 8 threads submit to one queue; every byte that went through the device is checked.
TEST(SimQueue, EightThreadsOnOneQueue) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    constexpr int kThreads = 8;
    constexpr int kPerThread = 64;
    constexpr size_t kChunk = 4096 + 24;
    Memory src(d, MemoryKind::host, kThreads * kPerThread * kChunk);
    Memory dev(d, MemoryKind::device, kThreads * kPerThread * kChunk);
    Memory out(d, MemoryKind::host, kThreads * kPerThread * kChunk);
    pattern(src.ptr(), kThreads * kPerThread * kChunk, 99);
    std::memset(out.ptr(), 0, kThreads * kPerThread * kChunk);
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            auto p = test::pool(d, 1);
            auto last = test::event(p);
            for (int i = 0; i < kPerThread; ++i) {
                const size_t off = (static_cast<size_t>(t) * kPerThread + i) * kChunk;
                const bool tail = i + 1 == kPerThread;
                if (q->append_copy(dev.get() + off, src.get() + off, kChunk, nullptr, {}) != ZE_RESULT_SUCCESS ||
                    q->append_copy(out.get() + off, dev.get() + off, kChunk, tail ? last : nullptr, {}) !=
                        ZE_RESULT_SUCCESS)
                    failures.fetch_add(1);
            }
            if (last->host_synchronize(kHangGuardNs) != ZE_RESULT_SUCCESS) failures.fetch_add(1);
        });
    }
    for (auto& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(out.ptr(), src.ptr(), kThreads * kPerThread * kChunk), 0);
}

TEST(SimQueue, WaitTimeouts) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    auto p = test::pool(d, 2);
    auto gate = test::event(p, 0);
    auto e = test::event(p, 1);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q->append_barrier(e, waits), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(0), ZE_RESULT_NOT_READY);
    const uint64_t t0 = host_now_ns();
    EXPECT_EQ(e->host_synchronize(2'000'000), ZE_RESULT_NOT_READY);
    EXPECT_GE(host_now_ns() - t0, 2'000'000u);  // waited its whole timeout
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->host_synchronize(2'000'000), ZE_RESULT_NOT_READY);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
}

// A command waits for every one of its wait events; across queues and engines.
TEST(SimQueue, WaitEventsAreHonoured) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 8u << 20;
    auto d = test::sim_device(c);
    constexpr size_t kSize = 128u << 10;  // ~15 ms on the producer
    Memory src(d, MemoryKind::host, kSize);
    Memory mid(d, MemoryKind::device, kSize);
    Memory out(d, MemoryKind::host, kSize);
    pattern(src.ptr(), kSize, 5);
    auto producer = test::queue(d, hal::kCopyOrdinal, 0);
    auto consumer = test::queue(d, hal::kCopyOrdinal, 1);
    auto p = test::pool(d, 3);
    auto produced = test::event(p, 0);
    auto host_gate = test::event(p, 1);
    auto consumed = test::event(p, 2);
    const hal::EventRef waits[] = {produced, host_gate};
    ASSERT_EQ(producer->append_copy(mid.ptr(), src.ptr(), kSize, produced, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(consumer->append_copy(out.ptr(), mid.ptr(), kSize, consumed, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(produced->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    // One of two wait events is not enough.
    EXPECT_EQ(consumed->host_synchronize(5'000'000), ZE_RESULT_NOT_READY);
    ASSERT_EQ(host_gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(consumed->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(out.ptr(), src.ptr(), kSize), 0);
}

TEST(SimQueue, BarrierCompletesAfterEverythingBefore) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 64u << 20;
    auto d = test::sim_device(c);
    auto q = test::queue(d);
    auto p = test::pool(d, 9);
    Memory m(d, MemoryKind::device, 64u << 10);
    const unsigned char v = 1;
    for (uint32_t i = 0; i < 8; ++i)
        ASSERT_EQ(q->append_fill(m.ptr(), &v, 1, 64u << 10, test::event(p, i), {}), ZE_RESULT_SUCCESS);
    auto barrier = test::event(p, 8);
    ASSERT_EQ(q->append_barrier(barrier, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(barrier->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; i < 8; ++i) EXPECT_EQ(test::event(p, i)->query(), ZE_RESULT_SUCCESS) << i;
    // A barrier with no event, and one on an idle queue.
    ASSERT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST(SimQueue, CancelANotYetStartedCommand) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    auto p = test::pool(d, 4, hal::kPoolKernelMappedTimestamp);
    auto gate = test::event(p, 0);
    auto first = test::event(p, 1);
    auto victim = test::event(p, 2);
    auto after = test::event(p, 3);
    Memory m(d, MemoryKind::host, 256);
    std::memset(m.ptr(), 0, 256);
    const hal::EventRef waits[] = {gate};
    const unsigned char one = 1;
    const unsigned char two = 2;
    ASSERT_EQ(q->append_barrier(first, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_fill(m.ptr(), &one, 1, 128, victim, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_fill(m.get() + 128, &two, 1, 128, after, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->cancel(victim), ZE_RESULT_SUCCESS);
    // Signalled at once, without timestamps.
    EXPECT_EQ(victim->query(), ZE_RESULT_SUCCESS);
    uint32_t n = 7;
    EXPECT_EQ(victim->query_kernel_timestamps(&n, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    n = 0;
    ASSERT_EQ(victim->query_kernel_timestamps(&n, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 0u);
    EXPECT_EQ(q->cancel(victim), ZE_RESULT_NOT_READY);  // no longer queued
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(m.get()[0], 0);    // the cancelled fill never ran
    EXPECT_EQ(m.get()[200], 2);  // the one behind it did
    EXPECT_EQ(after->query(), ZE_RESULT_SUCCESS);
    // Started or finished commands cannot be taken back.
    EXPECT_EQ(q->cancel(first), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->cancel(after), ZE_RESULT_NOT_READY);
}

TEST(SimQueue, CancelErrors) {
    auto d = test::sim_device();
    auto other = test::sim_device();
    auto q = test::queue(d);
    auto mine = test::event(test::pool(d, 1));
    auto peers = test::event(test::pool(other, 1));
    const hal::EventRef foreign = std::make_shared<test::ForeignEvent>();
    EXPECT_EQ(q->cancel(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->cancel(foreign), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->cancel(mine), ZE_RESULT_NOT_READY);   // never submitted
    EXPECT_EQ(q->cancel(peers), ZE_RESULT_NOT_READY);  // another sim device's: the same
    EXPECT_EQ(mine->query(), ZE_RESULT_NOT_READY);
}

// Cancel racing with the engine: each command either runs or is taken back, never both,
// and its event is signalled either way.
TEST(SimQueue, CancelRacesWithTheEngine) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    constexpr uint32_t kCount = 200;
    auto p = test::pool(d, kCount);
    Memory m(d, MemoryKind::host, kCount);
    std::memset(m.ptr(), 0, kCount);
    const unsigned char one = 1;
    std::vector<ze_result_t> results(kCount);
    for (uint32_t i = 0; i < kCount; ++i)
        ASSERT_EQ(q->append_fill(m.get() + i, &one, 1, 1, test::event(p, i), {}), ZE_RESULT_SUCCESS);
    for (uint32_t i = kCount; i-- > 0;) results[i] = q->cancel(test::event(p, i));
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; i < kCount; ++i) {
        EXPECT_EQ(test::event(p, i)->query(), ZE_RESULT_SUCCESS);
        if (results[i] == ZE_RESULT_SUCCESS)
            EXPECT_EQ(m.get()[i], 0) << i;
        else
            EXPECT_EQ(m.get()[i], 1) << i;
    }
}

TEST(SimQueue, CopyBadInput) {
    auto d = test::sim_device();
    auto other = test::sim_device();
    auto q = test::queue(d);
    Memory a(d, MemoryKind::device, 1024);
    Memory b(d, MemoryKind::host, 1024);
    Memory foreign_dev(other, MemoryKind::device, 1024);
    std::vector<unsigned char> plain(1024);
    auto mine = test::event(test::pool(d, 1));
    const hal::EventRef foreign = std::make_shared<test::ForeignEvent>();
    EXPECT_EQ(q->append_copy(nullptr, b.ptr(), 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr(), nullptr, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 0, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    // A peer device's memory is an operand (sim_peer_test.cpp), within its allocation's bounds.
    EXPECT_EQ(q->append_copy(foreign_dev.get() + 1000, plain.data(), 25, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(foreign_dev.ptr(), b.ptr(), 1025, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr(), foreign_dev.get() + 1, 1024, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    // Ranges past the end of their allocation.
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 1025, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.get() + 1000, b.ptr(), 25, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr(), b.get() + 1, 1024, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), ~size_t{0}, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    // Overlaps.
    EXPECT_EQ(q->append_copy(a.ptr(), a.ptr(), 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(q->append_copy(a.get() + 8, a.ptr(), 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(q->append_copy(a.ptr(), a.get() + 15, 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    // Events of no sim device; null wait events.
    const hal::EventRef null_waits[] = {mine, nullptr};
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 16, foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Another sim device's events are signalled (sim_peer_signal_test.cpp) and waited for
    // (sim_peer_test.cpp); null ones are not.
    EXPECT_EQ(q->append_copy(a.ptr(), b.ptr(), 16, nullptr, null_waits), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // Nothing was queued, and the queue still works.
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
    std::memset(b.ptr(), 0x61, 1024);
    ASSERT_EQ(q->append_copy(a.get() + 16, a.ptr(), 16, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(a.ptr(), b.ptr(), 1024, mine, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(mine->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST(SimQueue, ResetsAndTimestampsRunInQueueOrder) {
    test::expect_steps_run_in_queue_order(test::sim_device(), hal::kCopyOrdinal);
}

TEST(SimQueue, FillAndBarrierBadInput) {
    auto d = test::sim_device();
    auto other = test::sim_device();
    auto q = test::queue(d);
    Memory a(d, MemoryKind::shared, 1024);
    Memory foreign_dev(other, MemoryKind::device, 1024);
    const unsigned char pat[256] = {};
    const hal::EventRef foreign = std::make_shared<test::ForeignEvent>();  // of no sim device
    EXPECT_EQ(q->append_fill(nullptr, pat, 1, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(a.ptr(), nullptr, 1, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(a.ptr(), pat, 1, 0, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pat, 0, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pat, 3, 24, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pat, 256, 512, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pat, 8, 12, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(foreign_dev.get() + 1000, pat, 1, 25, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.get() + 1000, pat, 1, 25, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr(), pat, 1, 16, foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const hal::EventRef null_waits[] = {nullptr};
    EXPECT_EQ(q->append_barrier(foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_barrier(nullptr, null_waits), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_fill(a.ptr(), pat, 128, 1024, nullptr, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

// Work submitted before a queue goes away still runs.
TEST(SimQueue, DroppingAQueueKeepsItsWork) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 16u << 20;
    auto d = test::sim_device(c);
    Memory src(d, MemoryKind::host, 256u << 10);
    Memory dst(d, MemoryKind::host, 256u << 10);
    pattern(src.ptr(), 256u << 10, 21);
    auto e = test::event(test::pool(d, 1));
    {
        auto q = test::queue(d);
        ASSERT_EQ(q->append_copy(dst.ptr(), src.ptr(), 256u << 10, e, {}), ZE_RESULT_SUCCESS);
    }
    ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(dst.ptr(), src.ptr(), 256u << 10), 0);
    // Many short-lived queues on one engine.
    for (int i = 0; i < 100; ++i) {
        auto q = test::queue(d, hal::kCopyOrdinal, 1);
        ASSERT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_SUCCESS);
    }
}

// A device that goes away releases whoever waits on a command it can no longer run.
TEST(SimQueue, DeviceGoneReleasesBlockedCommands) {
    auto d = test::sim_device();
    auto p = test::pool(d, 2);
    auto gate = test::event(p, 0);
    auto e = test::event(p, 1);
    {
        auto q = test::queue(d);
        const hal::EventRef waits[] = {gate};
        ASSERT_EQ(q->append_barrier(e, waits), ZE_RESULT_SUCCESS);
    }
    d.reset();
    EXPECT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);  // events outlive their device
}

// Sub-devices split a command; the bytes are right whatever the split.
TEST(SimQueue, SubdevicesSplitCommands) {
    sim::SimConfig c;
    c.subdevices = 3;
    auto d = test::sim_device(c);
    auto q = test::queue(d);
    for (size_t size : {size_t{1}, size_t{2}, size_t{100}, size_t{65537}}) {
        Memory src(d, MemoryKind::host, size);
        Memory dev(d, MemoryKind::device, size);
        Memory out(d, MemoryKind::host, size);
        pattern(src.ptr(), size, static_cast<uint32_t>(size));
        ASSERT_EQ(q->append_copy(dev.ptr(), src.ptr(), size, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_copy(out.ptr(), dev.ptr(), size, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        EXPECT_EQ(std::memcmp(out.ptr(), src.ptr(), size), 0) << size;
    }
    Memory f(d, MemoryKind::host, 4 * 128);
    unsigned char pat[4] = {1, 2, 3, 4};
    ASSERT_EQ(q->append_fill(f.ptr(), pat, 4, 4 * 128, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    for (size_t i = 0; i < 4 * 128; ++i) ASSERT_EQ(f.get()[i], pat[i % 4]);
}

// The round trip the benchmarks measure, many times: submit, wait, reset.
TEST(SimQueue, ManySmallRoundTrips) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    auto e = test::event(test::pool(d, 1));
    Memory h(d, MemoryKind::host, 64);
    Memory dev(d, MemoryKind::device, 64);
    for (int i = 0; i < 5000; ++i) {
        ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_copy(dev.ptr(), h.ptr(), 64, e, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    }
}

}  // namespace
}  // namespace zehal
