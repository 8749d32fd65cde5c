#include "hal/pointer_registry.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace zehal::hal {
namespace {

Allocation alloc(uintptr_t base, size_t size, MemoryKind kind = MemoryKind::device) {
    Allocation a;
    a.info.base = reinterpret_cast<void*>(base);
    a.info.size = size;
    a.info.kind = kind;
    a.info.alignment = 64;
    return a;
}
const void* at(uintptr_t p) { return reinterpret_cast<const void*>(p); }

TEST(PointerRegistry, FindsBaseAndInteriorPointers) {
    PointerRegistry r;
    ASSERT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_SUCCESS);
    ASSERT_EQ(r.insert(alloc(0x2000, 0x10, MemoryKind::host)), ZE_RESULT_SUCCESS);
    Allocation out;
    ASSERT_TRUE(r.find(at(0x1000), &out));
    EXPECT_EQ(out.info.base, at(0x1000));
    ASSERT_TRUE(r.find(at(0x10FF), &out));
    EXPECT_EQ(out.info.size, 0x100u);
    EXPECT_FALSE(r.find(at(0x1100), &out));  // one past the end
    EXPECT_FALSE(r.find(at(0xFFF), &out));
    ASSERT_TRUE(r.find(at(0x2008), &out));
    EXPECT_EQ(out.info.kind, MemoryKind::host);
    EXPECT_FALSE(r.find(at(0), &out));
    EXPECT_EQ(r.count(), 2u);
}

TEST(PointerRegistry, RangeChecks) {
    PointerRegistry r;
    ASSERT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_SUCCESS);
    Allocation out;
    EXPECT_EQ(r.find_range(at(0x1000), 0x100, &out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.find_range(at(0x1080), 0x80, &out), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.find_range(at(0x1080), 0x81, &out), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(r.find_range(at(0x1000), ~size_t{0}, &out), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(r.find_range(at(0x1100), 1, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r.find_range(at(0x500), 1, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(PointerRegistry, RefusesOverlapsAndEmptyRanges) {
    PointerRegistry r;
    ASSERT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.insert(alloc(0x1000, 0x10)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r.insert(alloc(0x10F0, 0x100)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r.insert(alloc(0xF00, 0x101)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r.insert(alloc(0x3000, 0)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r.insert(alloc(~uintptr_t{0} - 4, 0x10)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r.insert(alloc(0x1100, 0x10)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.insert(alloc(0xF00, 0x100)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.count(), 3u);
}

TEST(PointerRegistry, RemoveOnlyByBaseAndOnlyOnce) {
    PointerRegistry r;
    ASSERT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_SUCCESS);
    Allocation out;
    EXPECT_FALSE(r.remove(at(0x1010), &out));  // interior
    EXPECT_FALSE(r.remove(at(0x9000), &out));  // foreign
    EXPECT_TRUE(r.remove(at(0x1000), &out));
    EXPECT_EQ(out.info.size, 0x100u);
    EXPECT_FALSE(r.remove(at(0x1000), &out));  // already removed
    EXPECT_FALSE(r.find(at(0x1000), &out));
    EXPECT_EQ(r.count(), 0u);
}

TEST(PointerRegistry, TakeAllEmpties) {
    PointerRegistry r;
    for (uintptr_t i = 1; i <= 10; ++i) ASSERT_EQ(r.insert(alloc(i * 0x1000, 0x800)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.take_all().size(), 10u);
    EXPECT_EQ(r.count(), 0u);
    EXPECT_TRUE(r.take_all().empty());
}

TEST(PointerRegistry, EmptyFollowsEveryChange) {
    PointerRegistry r;
    EXPECT_TRUE(r.empty());
    Allocation out;
    PointerRegistry::InFlight* held = nullptr;
    EXPECT_FALSE(r.find(at(0x1000), &out));
    EXPECT_EQ(r.find_range(at(0x1000), 1, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r.hold_range(at(0x1000), 1, &out, &held), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(r.empty());
    EXPECT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // refused: still one
    EXPECT_FALSE(r.empty());
    ASSERT_TRUE(r.remove(at(0x1000), &out));
    EXPECT_TRUE(r.empty());
    ASSERT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.take_all().size(), 1u);
    EXPECT_TRUE(r.empty());
    ASSERT_EQ(r.insert(alloc(0x1000, 0x100)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r.take_all_unused().size(), 1u);
    EXPECT_TRUE(r.empty());
}

// A range inserted into an empty registry is found by a thread that learns of it afterwards:
// the look-up's quick answer for an empty registry never misses an insert it follows.
TEST(PointerRegistry, AnInsertIsSeenByWhoeverLearnsOfIt) {
    PointerRegistry r;
    std::atomic<uintptr_t> published{0};
    std::atomic<int> misses{0};
    std::thread reader([&] {
        for (uintptr_t want = 1; want <= 2000; ++want) {
            uintptr_t base = 0;
            // Acquire: pairs with the writer's release after its insert.
            while ((base = published.load(std::memory_order_acquire)) != want * 0x1000) std::this_thread::yield();
            Allocation out;
            PointerRegistry::InFlight* held = nullptr;
            if (!r.find(at(base), &out) || r.find_range(at(base), 0x10, &out) != ZE_RESULT_SUCCESS ||
                r.hold_range(at(base), 0x10, &out, &held) != ZE_RESULT_SUCCESS)
                misses.fetch_add(1, std::memory_order_relaxed);
            PointerRegistry::release(held);
            published.store(0, std::memory_order_release);  // release: done with this range
        }
    });
    for (uintptr_t i = 1; i <= 2000; ++i) {
        ASSERT_EQ(r.insert(alloc(i * 0x1000, 0x10)), ZE_RESULT_SUCCESS);
        published.store(i * 0x1000, std::memory_order_release);
        while (published.load(std::memory_order_acquire) != 0) std::this_thread::yield();
        Allocation out;
        ASSERT_TRUE(r.remove(at(i * 0x1000), &out));
        ASSERT_TRUE(r.empty());
    }
    reader.join();
    EXPECT_EQ(misses.load(), 0);
}

// Writers insert and remove their own ranges while readers look up fixed ones.
TEST(PointerRegistry, ConcurrentInsertRemoveFind) {
    PointerRegistry r;
    ASSERT_EQ(r.insert(alloc(0x100, 0x100)), ZE_RESULT_SUCCESS);
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (uintptr_t t = 0; t < 4; ++t) {
        threads.emplace_back([&, t] {
            for (uintptr_t i = 0; i < 2000; ++i) {
                const uintptr_t base = 0x100000 * (t + 1) + (i % 64) * 0x100;
                ASSERT_EQ(r.insert(alloc(base, 0x80)), ZE_RESULT_SUCCESS);
                Allocation out;
                ASSERT_TRUE(r.find(at(base + 0x7F), &out));
                ASSERT_EQ(out.info.base, at(base));
                ASSERT_TRUE(r.remove(at(base), &out));
            }
        });
    }
    threads.emplace_back([&] {
        while (!stop) {
            Allocation out;
            ASSERT_EQ(r.find_range(at(0x180), 0x80, &out), ZE_RESULT_SUCCESS);
        }
    });
    for (size_t i = 0; i + 1 < threads.size(); ++i) threads[i].join();
    stop = true;
    threads.back().join();
    EXPECT_EQ(r.count(), 1u);
}

}  // namespace
}  // namespace zehal::hal
