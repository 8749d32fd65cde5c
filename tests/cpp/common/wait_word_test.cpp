#include "common/wait_word.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace zehal {
namespace {

TEST(WaitWord, ReturnsAtOnceWhenTheValueDiffers) {
    WaitWord w(5);
    EXPECT_TRUE(w.wait(4, kWaitForever));
    EXPECT_EQ(w.load(), 5u);
}

TEST(WaitWord, TimesOutWhileTheValueStays) {
    WaitWord w(1);
    const uint64_t t0 = host_now_ns();
    EXPECT_FALSE(w.wait(1, deadline_after(2'000'000)));
    EXPECT_GE(host_now_ns() - t0, 2'000'000u);
    EXPECT_FALSE(w.sleep(1, deadline_after(1'000'000)));
}

TEST(WaitWord, DeadlineInThePastIsATimeout) {
    WaitWord w(0);
    EXPECT_FALSE(w.wait(0, 0, 0));
    EXPECT_FALSE(w.sleep(0, 0));
}

TEST(WaitWord, StoreFetchAddFetchOrFetchAnd) {
    WaitWord w(0);
    w.store(3);
    EXPECT_EQ(w.fetch_add(2), 3u);
    EXPECT_EQ(w.fetch_or(8), 5u);
    EXPECT_EQ(w.fetch_and(~1u), 13u);
    EXPECT_EQ(w.load(), 12u);
}

TEST(DeadlineAfter, ForeverStaysForeverAndNoOverflow) {
    EXPECT_EQ(deadline_after(kWaitForever), kWaitForever);
    EXPECT_LT(deadline_after(kWaitForever - 1), kWaitForever);
    const uint64_t now = host_now_ns();
    EXPECT_GE(deadline_after(1000), now + 1000);
}

// A sleeper (no spin) is woken by a store from another thread.
TEST(WaitWord, SleeperWokenByStore) {
    WaitWord w(0);
    std::atomic<bool> woke{false};
    std::thread t([&] {
        while (w.load() == 0) w.sleep(0, kWaitForever);
        woke = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    w.store(1);
    t.join();
    EXPECT_TRUE(woke);
}

// Many waiters, woken together; wait_until re-checks a predicate after every change.
TEST(WaitWord, ManyWaitersAndWaitUntil) {
    WaitWord w(0);
    std::atomic<int> counter{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 6; ++i)
        threads.emplace_back([&] {
            EXPECT_TRUE(wait_until(
                w, [&] { return counter.load() >= 100; }, deadline_after(30'000'000'000ull), 0));
        });
    for (int i = 0; i < 100; ++i) {
        counter.fetch_add(1);
        w.fetch_add(1);
    }
    for (auto& t : threads) t.join();
}

// Ping-pong between two threads: every change is seen, none lost (a lost wake-up would hang
// until the guard deadline and fail).
TEST(WaitWord, PingPongLosesNoWakeUp) {
    WaitWord ping(0);
    WaitWord pong(0);
    constexpr uint32_t kRounds = 20000;
    std::thread t([&] {
        for (uint32_t i = 1; i <= kRounds; ++i) {
            ASSERT_TRUE(wait_until(
                ping, [&] { return ping.load() == i; }, deadline_after(30'000'000'000ull), i % 2 ? kDefaultSpinNs : 0));
            pong.store(i);
        }
    });
    for (uint32_t i = 1; i <= kRounds; ++i) {
        ping.store(i);
        ASSERT_TRUE(wait_until(
            pong, [&] { return pong.load() == i; }, deadline_after(30'000'000'000ull), i % 3 ? kDefaultSpinNs : 0));
    }
    t.join();
}

}  // namespace
}  // namespace zehal
