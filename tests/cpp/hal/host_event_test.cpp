#include "hal/host_event.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "common/clock.hpp"

namespace zehal::hal {
namespace {

// A domain whose device ticks are host ns (1 GHz), masked to `bits`; counts samples.
struct Fixture {
    std::atomic<int> samples{0};
    std::shared_ptr<EventDomain> domain;
    explicit Fixture(uint32_t flags = kTimestampKernel | kTimestampSynchronized, uint32_t bits = 64,
                     uint32_t packets = 2) {
        EventDomain::Params p;
        p.timer_hz = 1'000'000'000;
        p.kernel_timestamp_valid_bits = bits;
        p.timestamp_flags = flags;
        p.max_packets = packets;
        const uint64_t mask = timestamp_max(bits);
        domain = std::make_shared<EventDomain>(p, [this, mask] {
            samples.fetch_add(1);
            const uint64_t now = host_now_ns();
            return TimestampReference{now, now & mask};
        });
    }
    std::shared_ptr<EventPool> pool(uint32_t count, uint32_t flags) {
        std::shared_ptr<EventPool> p;
        EXPECT_EQ(domain->create_pool(count, flags, &p), ZE_RESULT_SUCCESS);
        return p;
    }
    static EventRef event(const std::shared_ptr<EventPool>& p, uint32_t i = 0) {
        EventRef e;
        EXPECT_EQ(p->event(i, &e), ZE_RESULT_SUCCESS);
        return e;
    }
};

TEST(EventPool, CreateErrors) {
    Fixture f(kTimestampKernel);
    std::shared_ptr<EventPool> p;
    EXPECT_EQ(f.domain->create_pool(1, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(f.domain->create_pool(0, 0, &p), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(f.domain->create_pool(1, 1u << 4, &p), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(f.domain->create_pool(1, 0x80000000u, &p), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(f.domain->create_pool(EventDomain::kMaxEventsPerPool + 1, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(f.domain->create_pool(~0u, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    // The device has kernel timestamps but no synchronized ones.
    EXPECT_EQ(f.domain->create_pool(1, kPoolKernelMappedTimestamp, &p), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(p, nullptr);
    ASSERT_EQ(f.domain->create_pool(3, kPoolHostVisible | kPoolIpc | kPoolKernelTimestamp, &p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(p->count(), 3u);
    EXPECT_EQ(p->flags(), kPoolHostVisible | kPoolIpc | kPoolKernelTimestamp);

    Fixture none(0);
    EXPECT_EQ(none.domain->create_pool(1, kPoolKernelTimestamp, &p), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(none.domain->create_pool(1, kPoolHostVisible, &p), ZE_RESULT_SUCCESS);
}

TEST(EventPool, EventIndexAndLifetime) {
    Fixture f;
    auto p = f.pool(2, kPoolHostVisible);
    EventRef e;
    EXPECT_EQ(p->event(2, &e), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p->event(~0u, &e), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(p->event(0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(p->event(1, &e), ZE_RESULT_SUCCESS);
    EventRef again = Fixture::event(p, 1);
    EXPECT_EQ(e.get(), again.get());  // one event per index
    EXPECT_EQ(&e->pool(), p.get());
    // The event keeps its pool (and domain) alive.
    std::weak_ptr<EventPool> weak = p;
    p.reset();
    f.domain.reset();
    EXPECT_FALSE(weak.expired());
    EXPECT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(again->query(), ZE_RESULT_SUCCESS);
    e.reset();
    again.reset();
    EXPECT_TRUE(weak.expired());
}

TEST(Event, SignalQueryResetSynchronize) {
    Fixture f;
    auto e = Fixture::event(f.pool(1, kPoolHostVisible));
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_synchronize(0), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_synchronize(1'000'000), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(0), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);  // signalling twice is harmless
    EXPECT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
}

TEST(Event, TimestampQueriesOnPoolsWithoutTheFlag) {
    Fixture f;
    auto plain = Fixture::event(f.pool(1, kPoolHostVisible));
    auto kernel = Fixture::event(f.pool(1, kPoolKernelTimestamp));
    for (const EventRef& e : {plain, kernel}) ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    uint32_t n = 0;
    KernelTimestampResult r{};
    EXPECT_EQ(plain->query_kernel_timestamps(&n, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(plain->query_synchronized_timestamps(&n, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(kernel->query_synchronized_timestamps(&n, &r), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(kernel->query_kernel_timestamps(&n, &r), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(kernel->query_kernel_timestamps(nullptr, &r), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    n = 1;
    EXPECT_EQ(kernel->query_kernel_timestamps(&n, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(Event, DevicePacketsCountSemanticsAndNotReady) {
    Fixture f(kTimestampKernel | kTimestampSynchronized, 64, 3);
    auto e = Fixture::event(f.pool(1, kPoolKernelMappedTimestamp));
    const KernelTimestampResult sentinel{1, 2, 3, 4};
    KernelTimestampResult out[5] = {sentinel, sentinel, sentinel, sentinel, sentinel};
    uint32_t n = 2;
    EXPECT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->query_synchronized_timestamps(&n, out), ZE_RESULT_NOT_READY);
    EXPECT_EQ(n, 2u);
    EXPECT_EQ(out[0].global_start, 1u);  // untouched
    n = 0;
    EXPECT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_NOT_READY);

    const TimestampReference ref{1'000, 500};
    const KernelTimestampResult packets[3] = {{510, 520, 510, 520}, {520, 530, 521, 529}, {530, 560, 530, 560}};
    static_cast<HostEvent*>(e.get())->signal_from_device(packets, ref);
    n = 0;
    ASSERT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 3u);
    n = 1;
    ASSERT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(out[0].global_start, 510u);
    EXPECT_EQ(out[1].global_start, 1u);  // beyond the count: untouched
    n = 5;
    ASSERT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 3u);
    EXPECT_EQ(out[1].context_end, 529u);
    EXPECT_EQ(out[3].global_start, 1u);
    n = 5;
    ASSERT_EQ(e->query_synchronized_timestamps(&n, out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 3u);
    EXPECT_EQ(out[0].global_start, 1'010u);
    EXPECT_EQ(out[0].global_end, 1'020u);
    EXPECT_EQ(out[1].context_start, 1'020u);
    EXPECT_EQ(out[1].context_end, 1'028u);
    EXPECT_EQ(out[2].global_end, 1'060u);

    // Reset clears them; a signal without timestamps has no packets.
    ASSERT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
    n = 1;
    EXPECT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_NOT_READY);
    static_cast<HostEvent*>(e.get())->signal_without_timestamps();
    n = 0;
    ASSERT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 0u);
    n = 4;
    ASSERT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, 0u);
}

TEST(Event, HostSignalRecordsOnePacketAtTheSignal) {
    Fixture f;
    auto e = Fixture::event(f.pool(1, kPoolKernelMappedTimestamp));
    const uint64_t before = host_now_ns();
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    const uint64_t after = host_now_ns();
    KernelTimestampResult r{};
    uint32_t n = 1;
    ASSERT_EQ(e->query_synchronized_timestamps(&n, &r), ZE_RESULT_SUCCESS);
    ASSERT_EQ(n, 1u);
    EXPECT_LE(before, r.global_start);
    EXPECT_LE(r.global_start, r.global_end);
    EXPECT_LE(r.global_end, after);
}

TEST(EventDomain, ReferenceResampledAfterHalfTheWrapPeriod) {
    // 1 GHz with 24 valid bits: wraps every 16.8 ms, re-sampled after 8.4 ms.
    Fixture f(kTimestampKernel | kTimestampSynchronized, 24);
    const TimestampReference a = f.domain->reference();
    const TimestampReference b = f.domain->reference();
    EXPECT_EQ(a.host_ns, b.host_ns);
    EXPECT_EQ(f.samples.load(), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const TimestampReference c = f.domain->reference();
    EXPECT_GT(c.host_ns, a.host_ns);
    EXPECT_EQ(f.samples.load(), 2);
    EXPECT_LE(c.ticks, timestamp_max(24));
}

TEST(EventDomain, ListenerCalledOnlyWhileWatched) {
    Fixture f;
    std::atomic<int> calls{0};
    f.domain->set_listener([&] { calls.fetch_add(1); });
    auto e = Fixture::event(f.pool(1, kPoolHostVisible));
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(calls.load(), 0);
    f.domain->add_watcher();
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(calls.load(), 1);
    f.domain->remove_watcher();
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(calls.load(), 1);
    f.domain->set_listener(nullptr);
    f.domain->add_watcher();
    ASSERT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    f.domain->remove_watcher();
}

// A domain made with a clock reads the device's ticks at any host instant (commands of other
// devices timestamp its events with it); one made without has none.
TEST(EventDomain, ClockGivesTheDevicesTicksAtAHostInstant) {
    Fixture without;
    EXPECT_FALSE(without.domain->has_clock());
    EXPECT_EQ(without.domain->half_wrap_ns(), wrap_period_ns(1'000'000'000, 64) / 2);
    EventDomain::Params p;
    p.timer_hz = 1'000'000;
    p.kernel_timestamp_valid_bits = 32;
    EventDomain with(
        p, [] { return TimestampReference{}; }, [](uint64_t host_ns) { return host_ns / 1000 + 7; });
    EXPECT_TRUE(with.has_clock());
    EXPECT_EQ(with.ticks_at(5'000'000), 5'007u);
    EXPECT_EQ(with.half_wrap_ns(), wrap_period_ns(1'000'000, 32) / 2);
}

TEST(EventDomain, LostAnswersDeviceLostAndWakesWaiters) {
    Fixture f;
    auto p = f.pool(2, kPoolKernelMappedTimestamp);
    auto e = Fixture::event(p, 0);
    ze_result_t waited = ZE_RESULT_SUCCESS;
    std::thread waiter([&] { waited = e->host_synchronize(kWaitForever); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_TRUE(f.domain->lose());
    EXPECT_FALSE(f.domain->lose());
    waiter.join();
    EXPECT_EQ(waited, ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_TRUE(f.domain->lost());
    uint32_t n = 0;
    EXPECT_EQ(e->query(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->host_signal(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->host_reset(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->host_synchronize(0), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->query_synchronized_timestamps(&n, nullptr), ZE_RESULT_ERROR_DEVICE_LOST);
    EventRef other;
    EXPECT_EQ(p->event(1, &other), ZE_RESULT_ERROR_DEVICE_LOST);
    std::shared_ptr<EventPool> q;
    EXPECT_EQ(f.domain->create_pool(1, 0, &q), ZE_RESULT_ERROR_DEVICE_LOST);
}

// Waiters on many threads; one signaller; then many threads querying one event at once.
TEST(Event, ManyWaitersAndConcurrentQueries) {
    Fixture f(kTimestampKernel | kTimestampSynchronized, 64, 2);
    auto e = Fixture::event(f.pool(1, kPoolKernelMappedTimestamp));
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (int i = 0; i < 6; ++i)
        threads.emplace_back([&] {
            if (e->host_synchronize(30'000'000'000ull) == ZE_RESULT_SUCCESS) ok.fetch_add(1);
        });
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const KernelTimestampResult packets[2] = {{10, 20, 10, 20}, {20, 40, 25, 35}};
    static_cast<HostEvent*>(e.get())->signal_from_device(packets, {100, 0});
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), 6);
    threads.clear();
    for (int i = 0; i < 6; ++i)
        threads.emplace_back([&] {
            for (int k = 0; k < 2000; ++k) {
                KernelTimestampResult out[2]{};
                uint32_t n = 2;
                ASSERT_EQ(e->query_synchronized_timestamps(&n, out), ZE_RESULT_SUCCESS);
                ASSERT_EQ(n, 2u);
                ASSERT_EQ(out[1].global_start, 120u);
                ASSERT_EQ(out[1].context_end, 130u);
                n = 2;
                ASSERT_EQ(e->query_kernel_timestamps(&n, out), ZE_RESULT_SUCCESS);
                ASSERT_EQ(out[0].global_end, 20u);
            }
        });
    for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace zehal::hal
