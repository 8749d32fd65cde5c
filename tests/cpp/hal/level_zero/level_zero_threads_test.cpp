// Several threads on one level_zero device: allocations, copies on one queue, events.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

TEST(LevelZeroThreads, ThreadsShareAQueueAndEachGetsItsBytes) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    constexpr int kThreads = 4;
    constexpr int kRounds = 20;
    constexpr size_t kSize = 4096;
    Events ev(dev, kThreads);
    std::vector<std::thread> threads;
    std::vector<int> failures(kThreads, 0);
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            for (int round = 0; round < kRounds; ++round) {
                void* host = nullptr;
                void* device = nullptr;
                void* back = nullptr;
                if (dev->allocate(hal::MemoryKind::host, kSize, 0, 0, 0, &host) != ZE_RESULT_SUCCESS ||
                    dev->allocate(hal::MemoryKind::device, kSize, 0, 0, 0, &device) != ZE_RESULT_SUCCESS ||
                    dev->allocate(hal::MemoryKind::host, kSize, 0, 0, 0, &back) != ZE_RESULT_SUCCESS) {
                    ++failures[t];
                    return;
                }
                std::memset(host, t * 16 + round, kSize);
                const hal::EventRef& e = ev.events[t];
                bool ok = e->host_reset() == ZE_RESULT_SUCCESS &&
                          q->append_copy(device, host, kSize, nullptr, {}) == ZE_RESULT_SUCCESS &&
                          q->append_copy(back, device, kSize, e, {}) == ZE_RESULT_SUCCESS &&
                          e->host_synchronize(kHangGuardNs) == ZE_RESULT_SUCCESS && std::memcmp(host, back, kSize) == 0;
                if (t % 2 == 0) ok = ok && q->host_synchronize(kHangGuardNs) == ZE_RESULT_SUCCESS;
                ok = dev->free(host) == ZE_RESULT_SUCCESS && ok;
                ok = dev->free(device) == ZE_RESULT_SUCCESS && ok;
                ok = dev->free(back) == ZE_RESULT_SUCCESS && ok;
                if (!ok) ++failures[t];
            }
        });
    }
    for (std::thread& t : threads) t.join();
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], 0) << "thread " << t;
}

}  // namespace
}  // namespace zehal::test
