// Event pools and events: zehal::EventPool, Event (query, synchronize, signal, reset, kernel
// and synchronized timestamps), elapsed_ticks.
#include <gtest/gtest.h>

#include <zehal/zehal.hpp>

#include <atomic>
#include <thread>
#include <utility>

#include "expect_code.hpp"

namespace {

zehal::Device sim() { return zehal::Device::get("sim"); }

TEST(CppApiEvents, SignalQueryReset) {
    const zehal::EventPool pool(sim(), 2);
    const zehal::Event e = pool.event(1);
    EXPECT_FALSE(e.query());
    EXPECT_FALSE(e.synchronize(0));
    e.signal();
    EXPECT_TRUE(e.query());
    EXPECT_TRUE(e.synchronize());
    e.reset();
    EXPECT_FALSE(e.query());
}

TEST(CppApiEvents, HostSignalRecordsTimestamps) {
    const zehal::Device d = sim();
    const zehal::EventPool kernel(d, 1, zehal::Timestamps::kernel);
    const zehal::Event k = kernel.event(0);
    EXPECT_ZE_ERROR(k.kernel_timestamps(), ZE_RESULT_NOT_READY);
    k.signal();
    const auto ticks = k.kernel_timestamps();
    ASSERT_EQ(ticks.size(), 1u);
    EXPECT_LE(ticks[0].global.kernel_start, ticks[0].global.kernel_end);
    EXPECT_ZE_ERROR(k.synchronized_timestamps(), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);

    const zehal::EventPool mapped(d, 1, zehal::Timestamps::mapped);
    const zehal::Event m = mapped.event(0);
    const auto [host_before, ticks_before] = d.global_timestamps();
    m.signal();
    const auto [host_after, ticks_after] = d.global_timestamps();
    const auto ns = m.synchronized_timestamps();
    ASSERT_EQ(ns.size(), 1u);
    EXPECT_LE(host_before, ns[0].global.kernel_start);
    EXPECT_LE(ns[0].global.kernel_end, host_after);
    (void)ticks_before;
    (void)ticks_after;

    const zehal::EventPool plain(d, 1);
    const zehal::Event p = plain.event(0);
    p.signal();
    EXPECT_ZE_ERROR(p.kernel_timestamps(), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST(CppApiEvents, BadPoolsAndEventsThrow) {
    const zehal::Device d = sim();
    EXPECT_ZE_ERROR(zehal::EventPool(d, 0), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_ZE_ERROR(zehal::EventPool(d, UINT32_MAX), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    const zehal::EventPool pool(d, 2);
    EXPECT_ZE_ERROR(pool.event(2), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(pool.event(UINT32_MAX), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(CppApiEvents, MovedFromEventsThrowNullHandle) {
    const zehal::EventPool pool(sim(), 2);
    zehal::Event a = pool.event(0);
    zehal::Event b = std::move(a);
    EXPECT_EQ(a.handle(), nullptr);
    EXPECT_ZE_ERROR(a.query(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_ZE_ERROR(a.signal(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_ZE_ERROR(a.synchronize(0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_ZE_ERROR(a.reset(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_ZE_ERROR(a.kernel_timestamps(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    b.signal();
    a = pool.event(1);  // a moved-from Event takes a new one
    EXPECT_FALSE(a.query());
    b = std::move(a);  // b's event is destroyed; b now holds event 1
    EXPECT_FALSE(b.query());
}

TEST(CppApiEvents, EventsKeepTheirPool) {
    zehal::Event e = zehal::EventPool(sim(), 1, zehal::Timestamps::kernel).event(0);
    e.signal();
    EXPECT_EQ(e.kernel_timestamps().size(), 1u);
}

TEST(CppApiEvents, AnotherThreadSignals) {
    const zehal::EventPool pool(sim(), 1);
    const zehal::Event e = pool.event(0);
    std::atomic<int> waiters_done{0};
    std::vector<std::thread> waiters;
    for (int i = 0; i < 4; ++i)
        waiters.emplace_back([&] {
            if (e.synchronize()) waiters_done.fetch_add(1, std::memory_order_relaxed);  // counter only
        });
    std::thread signaller([&] { e.signal(); });
    signaller.join();
    for (auto& t : waiters) t.join();
    EXPECT_EQ(waiters_done.load(), 4);
}

TEST(CppApiEvents, ElapsedTicksWrap) {
    static_assert(zehal::elapsed_ticks(10, 30, 32) == 20);
    static_assert(zehal::elapsed_ticks(0xFFFFFFF0u, 0x10u, 32) == 0x20);
    static_assert(zehal::elapsed_ticks(UINT64_MAX - 1, 1, 64) == 3);
    EXPECT_EQ(zehal::elapsed_ticks(5, 5, 40), 0u);
}

}  // namespace
