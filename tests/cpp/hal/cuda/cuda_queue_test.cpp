// Queues of the CUDA backend: every bad input with its code, an event of no CUDA pool, and
// cancel on a stream. Copies, fills, events and barriers are the HAL conformance suite's
// (cuda_contract_test.cpp).
#include <gtest/gtest.h>

#include <cstring>

#include "support/backend_devices.hpp"
#include "support/foreign_event.hpp"
#include "support/queued_steps.hpp"

namespace zehal::test {
namespace {

TEST(CudaQueue, ResetsAndTimestampsRunInQueueOrder) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    expect_steps_run_in_queue_order(dev, hal::kCopyOrdinal);
}

TEST(CudaQueue, BadInput) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    std::shared_ptr<hal::Queue> q;
    const uint32_t copies = dev->properties().copy_engines;
    EXPECT_EQ(dev->create_queue(2, 0, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->create_queue(hal::kCopyOrdinal, copies, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->create_queue(hal::kComputeOrdinal, 1, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(dev->create_queue(hal::kCopyOrdinal, copies - 1, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->ordinal(), hal::kCopyOrdinal);
    EXPECT_EQ(q->index(), copies - 1);

    Memory a(dev, hal::MemoryKind::device, 4096), b(dev, hal::MemoryKind::host, 4096);
    // Pages not mapped (system memory is an operand: tests/cpp/hal/cuda/cuda_system_memory_test.cpp).
    auto* unmapped = reinterpret_cast<uint8_t*>(uintptr_t{4096});
    const uint8_t pattern[256] = {};
    EXPECT_EQ(q->append_copy(nullptr, b.ptr, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr, nullptr, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr, b.ptr, 0, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr, b.ptr, 4097, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.as() + 4000, b.ptr, 100, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr, unmapped, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(unmapped, a.ptr, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(a.as() + 32, a.ptr, 64, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(q->append_fill(nullptr, pattern, 1, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(a.ptr, nullptr, 1, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 3, 63, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 256, 256, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 8, 12, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 0, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 1, 0, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.as() + 4090, pattern, 1, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(unmapped, pattern, 1, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);

    auto foreign = std::make_shared<ForeignEvent>();
    Events ev(dev, 1);
    const hal::EventRef null_wait[] = {nullptr};
    const hal::EventRef foreign_wait[] = {foreign};
    EXPECT_EQ(q->append_copy(a.ptr, b.ptr, 64, foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(a.ptr, b.ptr, 64, nullptr, null_wait), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->append_copy(a.ptr, b.ptr, 64, nullptr, foreign_wait), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 1, 64, foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_barrier(foreign, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_barrier(nullptr, null_wait), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->cancel(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->cancel(foreign), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // A stream cannot take a command back: the caller waits for it.
    ASSERT_EQ(q->append_copy(a.ptr, b.ptr, 64, ev.events[0], {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->cancel(ev.events[0]), ZE_RESULT_NOT_READY);
    EXPECT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);

    std::shared_ptr<hal::EventPool> pool;
    EXPECT_EQ(dev->create_event_pool(0, 0, &pool), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(dev->create_event_pool(1, 1u << 4, &pool), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(dev->create_event_pool((1u << 20) + 1, 0, &pool), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(dev->create_event_pool(1, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);

    // Still usable after all of it.
    std::memset(b.ptr, 0x77, 4096);
    copy_and_wait(*q, a.ptr, b.ptr, 4096);
    EXPECT_EQ(read_back(dev, *q, a.ptr, 4096), std::vector<uint8_t>(4096, 0x77));
}

}  // namespace
}  // namespace zehal::test
