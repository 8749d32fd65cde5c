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
