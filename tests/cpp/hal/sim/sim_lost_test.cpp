// Device lost: every later call answers DEVICE_LOST, and pending waits return instead of
// hanging.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <unistd.h>
#include <sys/mman.h>

#include "hal/sim/sim_device.hpp"
#include "hal/sim/sim_trace.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

using hal::MemoryKind;
using test::kHangGuardNs;

TEST(SimLost, EveryLaterCallAnswersDeviceLost) {
    auto d = test::sim_device();
    auto q = test::queue(d);
    auto p = test::pool(d, 2, hal::kPoolKernelMappedTimestamp);
    auto e = test::event(p, 0);
    void* dev = nullptr;
    void* host = nullptr;
    ASSERT_EQ(d->allocate(MemoryKind::device, 256, 0, 0, 0, &dev), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->allocate(MemoryKind::host, 256, 0, 0, 0, &host), ZE_RESULT_SUCCESS);
    const std::string name = d->properties().name;

    ASSERT_EQ(d->lose(), ZE_RESULT_SUCCESS);

    // The device's own calls are the contract suite's (tests/cpp/hal/contract/); here its
    // queue's, its events' and its frees.
    hal::EventRef e2;
    uint32_t n = 0;
    const unsigned char v = 1;
    EXPECT_EQ(q->append_copy(dev, host, 16, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_fill(dev, &v, 1, 16, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->cancel(e), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(p->event(1, &e2), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->query(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->host_signal(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->host_reset(), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->host_synchronize(kWaitForever), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->query_kernel_timestamps(&n, nullptr), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(e->query_synchronized_timestamps(&n, nullptr), ZE_RESULT_ERROR_DEVICE_LOST);
    // Frees answer DEVICE_LOST too, but give the memory back (nothing leaks).
    EXPECT_EQ(d->free(dev), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(d->free(host), ZE_RESULT_ERROR_DEVICE_LOST);
    // Properties still answer.
    EXPECT_EQ(d->properties().name, name);
    EXPECT_EQ(d->backend_name(), "sim");
    EXPECT_FALSE(d->metric_groups().empty());
}

// Threads waiting on an event, on a queue, and an engine throttling a long copy: all are
// released by lose().
TEST(SimLost, PendingWaitsReturnDeviceLost) {
    sim::SimConfig c;
    c.bandwidth_bytes_per_s = 1u << 10;  // a 64 KiB copy would take a minute
    auto d = test::sim_device(c);
    auto p = test::pool(d, 3);
    auto gate = test::event(p, 0);
    auto blocked = test::event(p, 1);
    auto slow = test::event(p, 2);
    test::Memory src(d, MemoryKind::host, 64u << 10);
    test::Memory dst(d, MemoryKind::device, 64u << 10);
    auto q0 = test::queue(d, hal::kCopyOrdinal, 0);
    auto q1 = test::queue(d, hal::kCopyOrdinal, 1);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q0->append_barrier(blocked, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q1->append_copy(dst.ptr(), src.ptr(), 64u << 10, slow, {}), ZE_RESULT_SUCCESS);
    ze_result_t r_blocked = ZE_RESULT_SUCCESS;
    ze_result_t r_slow = ZE_RESULT_SUCCESS;
    ze_result_t r_q0 = ZE_RESULT_SUCCESS;
    ze_result_t r_q1 = ZE_RESULT_SUCCESS;
    std::vector<std::thread> waiters;
    waiters.emplace_back([&] { r_blocked = blocked->host_synchronize(kWaitForever); });
    waiters.emplace_back([&] { r_slow = slow->host_synchronize(kWaitForever); });
    waiters.emplace_back([&] { r_q0 = q0->host_synchronize(kWaitForever); });
    waiters.emplace_back([&] { r_q1 = q1->host_synchronize(kWaitForever); });
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(d->lose(), ZE_RESULT_SUCCESS);
    for (auto& w : waiters) w.join();
    EXPECT_EQ(r_blocked, ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(r_slow, ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(r_q0, ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(r_q1, ZE_RESULT_ERROR_DEVICE_LOST);
    // The device can still be destroyed (engines stop) without waiting for the throttle.
    q0.reset();
    q1.reset();
}

// Losing one device leaves the others alone.
TEST(SimLost, OtherDevicesAreUnaffected) {
    auto a = test::sim_device();
    auto b = test::sim_device();
    ASSERT_EQ(a->lose(), ZE_RESULT_SUCCESS);
    test::Memory m(b, MemoryKind::device, 64);
    auto q = test::queue(b);
    const unsigned char v = 3;
    ASSERT_EQ(q->append_fill(m.ptr(), &v, 1, 64, nullptr, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST(SimLost, LoseFromManyThreadsOnce) {
    auto d = test::sim_device();
    std::atomic<int> successes{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
        threads.emplace_back([&] {
            const ze_result_t r = d->lose();
            if (r == ZE_RESULT_SUCCESS) {
                successes.fetch_add(1);
            } else {
                EXPECT_EQ(r, ZE_RESULT_ERROR_DEVICE_LOST);
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(successes.load(), 1);
}

// Contract §11: losing the device releases waiters at once, but memory freed right after is
// not given back while an engine still copies into it (AddressSanitizer sees any write to
// freed memory in the sanitizer run).
TEST(SimLost, FreeAfterLoseWaitsForTheRunningCopy) {
    for (int round = 0; round < 4; ++round) {
        auto d = test::sim_device();
        auto q = test::queue(d);
        auto p = test::pool(d, 1, 0);
        auto e = test::event(p, 0);
        constexpr size_t kBytes = 64u << 20;
        void* src = nullptr;
        void* dst = nullptr;
        ASSERT_EQ(d->allocate(MemoryKind::host, kBytes, 0, 0, 0, &src), ZE_RESULT_SUCCESS);
        ASSERT_EQ(d->allocate(MemoryKind::host, kBytes, 0, 0, 0, &dst), ZE_RESULT_SUCCESS);
        for (int i = 0; i < 4; ++i) ASSERT_EQ(q->append_copy(dst, src, kBytes, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->append_copy(dst, src, kBytes, e, {}), ZE_RESULT_SUCCESS);
        std::this_thread::sleep_for(std::chrono::milliseconds(round));  // lose at various points
        ASSERT_EQ(d->lose(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_ERROR_DEVICE_LOST);
        EXPECT_EQ(d->free(dst), ZE_RESULT_ERROR_DEVICE_LOST);  // given back all the same
        EXPECT_EQ(d->free(src), ZE_RESULT_ERROR_DEVICE_LOST);
    }
}

}  // namespace
}  // namespace zehal
