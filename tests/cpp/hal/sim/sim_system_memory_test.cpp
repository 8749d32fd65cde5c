// System memory is host memory too (contract §2.2): sim queues copy and fill memory no
// zehal area mapped (malloc, the stack, a std::vector) as pageable host memory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "hal/queue.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

using hal::MemoryKind;
using test::Memory;

// Memory from malloc, freed when it goes.
struct Malloced {
    explicit Malloced(size_t size) : ptr(static_cast<unsigned char*>(std::malloc(size))) {}
    ~Malloced() { std::free(ptr); }
    Malloced(const Malloced&) = delete;
    Malloced& operator=(const Malloced&) = delete;
    unsigned char* ptr;
};

ze_result_t copy_and_wait(const std::shared_ptr<hal::Queue>& q, void* dst, const void* src, size_t size) {
    if (ze_result_t r = q->append_copy(dst, src, size, nullptr, {}); r != ZE_RESULT_SUCCESS) return r;
    return q->host_synchronize(test::kHangGuardNs);
}

std::vector<unsigned char> bytes_of(const void* p, size_t size) {
    const auto* b = static_cast<const unsigned char*>(p);
    return {b, b + size};
}

class SimSystemMemory : public ::testing::TestWithParam<uint32_t> {
protected:
    hal::DeviceRef d = test::sim_device();
    std::shared_ptr<hal::Queue> q = test::queue(d, GetParam());
};

TEST_P(SimSystemMemory, MallocedMemoryIsCopiedToAndFromEveryKind) {
    constexpr size_t kSize = 3u << 20;  // above the sim's heap limit: device memory from mmap too
    Malloced src(kSize), back(kSize);
    ASSERT_TRUE(src.ptr && back.ptr);
    for (size_t i = 0; i < kSize; ++i) src.ptr[i] = static_cast<unsigned char>(i * 13 + 5);
    for (MemoryKind kind : {MemoryKind::device, MemoryKind::shared, MemoryKind::host}) {
        Memory mem(d, kind, kSize);
        std::memset(back.ptr, 0, kSize);
        ASSERT_EQ(copy_and_wait(q, mem.ptr(), src.ptr, kSize), ZE_RESULT_SUCCESS);
        ASSERT_EQ(copy_and_wait(q, back.ptr, mem.ptr(), kSize), ZE_RESULT_SUCCESS);
        EXPECT_EQ(std::memcmp(back.ptr, src.ptr, kSize), 0) << static_cast<int>(kind);
    }
    // Between two malloc'd buffers, and at offsets inside them.
    std::memset(back.ptr, 0, kSize);
    ASSERT_EQ(copy_and_wait(q, back.ptr + 7, src.ptr + 3, kSize - 10), ZE_RESULT_SUCCESS);
    EXPECT_EQ(back.ptr[6], 0);
    EXPECT_EQ(std::memcmp(back.ptr + 7, src.ptr + 3, kSize - 10), 0);
}

TEST_P(SimSystemMemory, AVectorAndTheStackAreOperands) {
    std::vector<uint32_t> vec(1024);
    for (size_t i = 0; i < vec.size(); ++i) vec[i] = static_cast<uint32_t>(i * 2654435761u);
    Memory dev(d, MemoryKind::device, 4096);
    ASSERT_EQ(copy_and_wait(q, dev.ptr(), vec.data(), 4096), ZE_RESULT_SUCCESS);
    unsigned char on_stack[4096];
    std::memset(on_stack, 0, sizeof on_stack);
    ASSERT_EQ(copy_and_wait(q, on_stack, dev.ptr(), 4096), ZE_RESULT_SUCCESS);
    EXPECT_EQ(bytes_of(on_stack, 4096), bytes_of(vec.data(), 4096));
    // Stack to vector, directly.
    std::memset(on_stack, 0x5A, sizeof on_stack);
    ASSERT_EQ(copy_and_wait(q, vec.data(), on_stack, 4096), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vec[1023], 0x5A5A5A5Au);
}

TEST_P(SimSystemMemory, SystemMemoryIsFilled) {
    Malloced buf(1u << 16);
    ASSERT_TRUE(buf.ptr);
    std::memset(buf.ptr, 0, 1u << 16);
    const unsigned char pattern[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    ASSERT_EQ(q->append_fill(buf.ptr + 8, pattern, 8, (1u << 16) - 16, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(test::kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(buf.ptr[7], 0);
    EXPECT_EQ(buf.ptr[8], 1);
    EXPECT_EQ(buf.ptr[(1u << 16) - 9], 8);
    EXPECT_EQ(buf.ptr[(1u << 16) - 8], 0);
    std::vector<uint16_t> vec(100, 0);
    const uint16_t word = 0xBEEF;
    ASSERT_EQ(q->append_fill(vec.data(), &word, 2, 200, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(test::kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vec, std::vector<uint16_t>(100, 0xBEEF));
}

TEST_P(SimSystemMemory, EventsOrderSystemMemoryCopiesLikeAnyOther) {
    auto pool = test::pool(d, 2);
    auto first = test::event(pool, 0);
    auto second = test::event(pool, 1);
    Malloced a(4096), b(4096);
    std::memset(a.ptr, 0x11, 4096);
    std::memset(b.ptr, 0, 4096);
    Memory dev(d, MemoryKind::device, 4096);
    // The second copy waits for the first, which waits for the host.
    auto gate = test::event(test::pool(d, 1));
    const hal::EventRef gate_waits[] = {gate};
    const hal::EventRef first_waits[] = {first};
    ASSERT_EQ(q->append_copy(dev.ptr(), a.ptr, 4096, first, gate_waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(b.ptr, dev.ptr(), 4096, second, first_waits), ZE_RESULT_SUCCESS);
    EXPECT_EQ(second->query(), ZE_RESULT_NOT_READY);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(second->host_synchronize(test::kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(bytes_of(b.ptr, 4096), std::vector<unsigned char>(4096, 0x11));
}

TEST_P(SimSystemMemory, BadInputIsStillRefused) {
    Malloced buf(4096);
    ASSERT_TRUE(buf.ptr);
    Memory dev(d, MemoryKind::device, 4096);
    const unsigned char pat[4] = {};
    // Null stays null.
    EXPECT_EQ(q->append_copy(nullptr, buf.ptr, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(buf.ptr, nullptr, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(nullptr, pat, 4, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    // Overlapping ranges, within one buffer.
    EXPECT_EQ(q->append_copy(buf.ptr + 8, buf.ptr, 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(q->append_copy(buf.ptr, buf.ptr + 15, 16, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    // A range past the end of the device's allocation is still its allocation's size.
    EXPECT_EQ(q->append_copy(dev.ptr(), buf.ptr, 4097, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    // A peer device's memory is its allocation, bounds included, beside system memory too.
    auto other = test::sim_device();
    Memory theirs(other, MemoryKind::device, 4096);
    EXPECT_EQ(q->append_copy(theirs.get() + 8, buf.ptr, 4090, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(buf.ptr, theirs.get() + 4095, 2, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(theirs.get() + 4092, pat, 4, 8, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    // Pages that are not mapped are refused, never touched.
    const auto* unmapped = reinterpret_cast<const void*>(uintptr_t{4096});
    EXPECT_EQ(q->append_copy(buf.ptr, unmapped, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_fill(const_cast<void*>(unmapped), pat, 4, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Nothing was queued; the queue still works.
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
    ASSERT_EQ(copy_and_wait(q, dev.ptr(), buf.ptr, 4096), ZE_RESULT_SUCCESS);
}

INSTANTIATE_TEST_SUITE_P(Engines, SimSystemMemory, ::testing::Values(hal::kComputeOrdinal, hal::kCopyOrdinal),
                         [](const auto& info) { return info.param == hal::kCopyOrdinal ? "copy" : "compute"; });

}  // namespace
}  // namespace zehal
