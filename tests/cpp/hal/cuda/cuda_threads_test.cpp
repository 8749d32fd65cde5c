// Several threads on one CUDA device: submitting to one queue, querying one event,
// allocating and freeing.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

constexpr int kThreads = 8;

TEST(CudaThreads, EightThreadsSubmitToOneQueue) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    constexpr size_t kChunk = 4096, kRounds = 64;
    const size_t total = kThreads * kRounds * kChunk;
    Memory src(dev, hal::MemoryKind::host, total), mid(dev, hal::MemoryKind::device, total),
        dst(dev, hal::MemoryKind::host, total);
    for (size_t i = 0; i < total; ++i) src.as()[i] = static_cast<uint8_t>(i * 131 + 7);
    Events ev(dev, kThreads * kRounds);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (size_t r = 0; r < kRounds; ++r) {
                const size_t i = static_cast<size_t>(t) * kRounds + r;
                const size_t off = i * kChunk;
                EXPECT_EQ(q->append_copy(mid.as() + off, src.as() + off, kChunk, nullptr, {}), ZE_RESULT_SUCCESS);
                EXPECT_EQ(q->append_copy(dst.as() + off, mid.as() + off, kChunk, ev.events[i], {}), ZE_RESULT_SUCCESS);
            }
        });
    }
    for (auto& t : threads) t.join();
    for (const hal::EventRef& e : ev.events) ASSERT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(dst.ptr, src.ptr, total), 0);
}

TEST(CudaThreads, ThreadsQueryOneTimestampEvent) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Events ev(dev, 1, hal::kPoolHostVisible | hal::kPoolKernelMappedTimestamp);
    Memory a(dev, hal::MemoryKind::host, 1 << 16), b(dev, hal::MemoryKind::device, 1 << 16);
    ASSERT_EQ(q->append_copy(b.ptr, a.ptr, 1 << 16, ev.events[0], {}), ZE_RESULT_SUCCESS);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&] {
            EXPECT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
            for (int i = 0; i < 200; ++i) {
                uint32_t count = 1;
                hal::KernelTimestampResult k{}, s{};
                EXPECT_EQ(ev.events[0]->query_kernel_timestamps(&count, &k), ZE_RESULT_SUCCESS);
                EXPECT_EQ(ev.events[0]->query_synchronized_timestamps(&count, &s), ZE_RESULT_SUCCESS);
                EXPECT_LE(k.global_start, k.global_end);
                EXPECT_LE(s.global_start, s.global_end);
                uint64_t h = 0, d = 0;
                EXPECT_EQ(dev->global_timestamps(&h, &d), ZE_RESULT_SUCCESS);
            }
        });
    }
    for (auto& t : threads) t.join();
}

TEST(CudaThreads, AllocateAndFreeFromManyThreads) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            const auto kind = static_cast<hal::MemoryKind>(t % 3);
            for (int i = 0; i < 50; ++i) {
                void* p = nullptr;
                ASSERT_EQ(dev->allocate(kind, 4096 + static_cast<size_t>(i), 512, 0, 0, &p), ZE_RESULT_SUCCESS);
                hal::PointerInfo info;
                EXPECT_EQ(dev->pointer_info(p, &info), ZE_RESULT_SUCCESS);
                EXPECT_EQ(dev->free(p), ZE_RESULT_SUCCESS);
                EXPECT_EQ(dev->free(p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
            }
        });
    }
    for (auto& t : threads) t.join();
}

}  // namespace
}  // namespace zehal::test
