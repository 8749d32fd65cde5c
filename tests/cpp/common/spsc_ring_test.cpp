// The SPSC byte ring alone: capacity, wrap-around, batching, and two threads (run under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "common/spsc_ring.hpp"

namespace zehal {
namespace {

TEST(SpscRing, CapacityIsAPowerOfTwoOfAtLeastALine) {
    EXPECT_EQ(SpscByteRing(0).capacity(), SpscByteRing::kCacheLine);
    EXPECT_EQ(SpscByteRing(1).capacity(), SpscByteRing::kCacheLine);
    EXPECT_EQ(SpscByteRing(100).capacity(), 128u);
    EXPECT_EQ(SpscByteRing(4096).capacity(), 4096u);
    EXPECT_EQ(SpscByteRing(4097).capacity(), 8192u);
}

TEST(SpscRing, SidesLiveOnTheirOwnCacheLines) {
    EXPECT_EQ(alignof(SpscByteRing) % SpscByteRing::kCacheLine, 0u);
    EXPECT_GE(sizeof(SpscByteRing), 3 * SpscByteRing::kCacheLine);
}

TEST(SpscRing, EmptyRingHasNothingToReadAndEverythingToWrite) {
    SpscByteRing ring(256);
    EXPECT_EQ(ring.size(), 0u);
    EXPECT_EQ(ring.peek().size(), 0u);
    EXPECT_EQ(ring.reserve().size(), 256u);
    char buf[8];
    EXPECT_EQ(ring.pop(buf, sizeof buf), 0u);
}

TEST(SpscRing, PushUntilFullThenPopInOrder) {
    SpscByteRing ring(128);
    for (uint32_t i = 0; i < 32; ++i) ASSERT_TRUE(ring.try_push(&i, sizeof i)) << i;
    uint32_t extra = 99;
    EXPECT_FALSE(ring.try_push(&extra, sizeof extra));
    EXPECT_EQ(ring.size(), 128u);
    EXPECT_EQ(ring.reserve().size(), 0u);
    for (uint32_t i = 0; i < 32; ++i) {
        uint32_t v = 0;
        ASSERT_EQ(ring.pop(&v, sizeof v), sizeof v);
        EXPECT_EQ(v, i);
    }
    EXPECT_EQ(ring.size(), 0u);
}

TEST(SpscRing, AllOrNothingPushLeavesTheRingAsItWas) {
    SpscByteRing ring(64);
    std::vector<char> big(65, 'x');
    EXPECT_FALSE(ring.try_push(big.data(), big.size()));
    EXPECT_EQ(ring.size(), 0u);
    EXPECT_TRUE(ring.try_push(big.data(), 64));
    EXPECT_FALSE(ring.try_push(big.data(), 1));
    EXPECT_EQ(ring.size(), 64u);
}

TEST(SpscRing, RegionsSplitAtTheWrapAndKeepTheBytes) {
    SpscByteRing ring(64);
    std::vector<uint8_t> a(48);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint8_t>(i);
    ASSERT_TRUE(ring.try_push(a.data(), a.size()));
    std::vector<uint8_t> tmp(40);
    ASSERT_EQ(ring.pop(tmp.data(), tmp.size()), 40u);
    // A stale cached read index shows less free space; asking for more refreshes it.
    EXPECT_EQ(ring.reserve().size(), 16u);
    // Write index at 48, read index at 40: free space wraps.
    RingRegions w = ring.reserve(ring.capacity());
    EXPECT_EQ(w.size(), 56u);
    EXPECT_EQ(w.first.size(), 16u);
    EXPECT_EQ(w.second.size(), 40u);
    std::vector<uint8_t> b(30);
    for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<uint8_t>(100 + i);
    SpscByteRing::copy_in(w, b.data(), b.size());
    ring.commit(b.size());
    RingRegions r = ring.peek(ring.capacity());
    EXPECT_EQ(r.size(), 38u);
    EXPECT_EQ(r.first.size(), 24u);
    EXPECT_EQ(r.second.size(), 14u);
    std::vector<uint8_t> out(38);
    ASSERT_EQ(ring.pop(out.data(), out.size()), 38u);
    for (size_t i = 0; i < 8; ++i) EXPECT_EQ(out[i], 40 + i);
    for (size_t i = 0; i < 30; ++i) EXPECT_EQ(out[8 + i], 100 + i);
}

TEST(SpscRing, PopInUnitsNeverSplitsARecord) {
    SpscByteRing ring(256);
    std::vector<uint8_t> rec(96, 7);
    ASSERT_TRUE(ring.try_push(rec.data(), rec.size()));
    std::vector<uint8_t> out(256);
    EXPECT_EQ(ring.pop(out.data(), 31, 32), 0u);
    EXPECT_EQ(ring.pop(out.data(), 70, 32), 64u);
    EXPECT_EQ(ring.size(), 32u);
    EXPECT_EQ(ring.pop(out.data(), 256, 32), 32u);
}

TEST(SpscRing, PartialCommitPublishesOnlyThePrefix) {
    SpscByteRing ring(128);
    RingRegions w = ring.reserve(100);
    ASSERT_GE(w.size(), 100u);
    std::memset(w.first.data(), 1, 100);
    ring.commit(10);
    EXPECT_EQ(ring.size(), 10u);
    RingRegions r = ring.peek();
    EXPECT_EQ(r.size(), 10u);
    ring.release(4);
    EXPECT_EQ(ring.size(), 6u);
}

// Producer writes 32-byte records numbered 0..n-1 in random batch sizes; the consumer
// reads random amounts and checks every number; a third thread watches size().
TEST(SpscRing, TwoThreadsMoveEveryRecordInOrder) {
    struct Rec {
        uint64_t seq;
        uint64_t check;
        uint64_t pad[2];
    };
    static_assert(sizeof(Rec) == 32);
    constexpr uint64_t kRecords = 400'000;
    SpscByteRing ring(4096);
    std::atomic<bool> done{false};
    std::atomic<bool> size_ok{true};

    std::thread watcher([&] {
        while (!done.load(std::memory_order_acquire)) {
            if (ring.size() > ring.capacity()) size_ok = false;
        }
    });
    std::thread producer([&] {
        std::mt19937 rng(1);
        uint64_t i = 0;
        while (i < kRecords) {
            const size_t want = 1 + rng() % 64;
            RingRegions w = ring.reserve(sizeof(Rec));
            size_t n = std::min<uint64_t>({w.size() / sizeof(Rec), want, kRecords - i});
            if (n == 0) {
                std::this_thread::yield();
                continue;
            }
            std::vector<Rec> batch(n);
            for (size_t k = 0; k < n; ++k) batch[k] = Rec{i + k, ~(i + k), {0, 0}};
            SpscByteRing::copy_in(w, batch.data(), n * sizeof(Rec));
            ring.commit(n * sizeof(Rec));
            i += n;
        }
    });

    std::mt19937 rng(2);
    uint64_t expect = 0;
    std::vector<Rec> buf(80);
    while (expect < kRecords) {
        const size_t got = ring.pop(buf.data(), (1 + rng() % 80) * sizeof(Rec), sizeof(Rec));
        if (got == 0) {
            std::this_thread::yield();
            continue;
        }
        ASSERT_EQ(got % sizeof(Rec), 0u);
        for (size_t k = 0; k < got / sizeof(Rec); ++k) {
            ASSERT_EQ(buf[k].seq, expect);
            ASSERT_EQ(buf[k].check, ~expect);
            ++expect;
        }
    }
    producer.join();
    done.store(true, std::memory_order_release);
    watcher.join();
    EXPECT_TRUE(size_ok.load());
    EXPECT_EQ(ring.size(), 0u);
}

// Odd-sized messages through a ring whose size is not a multiple of them: bytes cross the
// wrap inside a message.
TEST(SpscRing, TwoThreadsOddSizedMessagesAcrossTheWrap) {
    constexpr uint32_t kMessages = 200'000;
    SpscByteRing ring(1000);
    std::thread producer([&] {
        for (uint32_t i = 0; i < kMessages;) {
            uint8_t msg[7];
            for (int k = 0; k < 7; ++k) msg[k] = static_cast<uint8_t>(i * 7 + k);
            if (ring.try_push(msg, sizeof msg))
                ++i;
            else
                std::this_thread::yield();
        }
    });
    for (uint32_t i = 0; i < kMessages;) {
        uint8_t msg[7];
        if (ring.pop(msg, sizeof msg, sizeof msg) == 0) {
            std::this_thread::yield();
            continue;
        }
        for (int k = 0; k < 7; ++k) ASSERT_EQ(msg[k], static_cast<uint8_t>(i * 7 + k));
        ++i;
    }
    producer.join();
}

}  // namespace
}  // namespace zehal
