// Queues of the level_zero backend: immediate command lists on the compute and copy groups.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <numeric>

#include "support/queued_steps.hpp"
#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

TEST(LevelZeroQueue, CopiesHostToDeviceToHostOnEachGroup) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    const hal::DeviceProperties& p = dev->properties();
    for (uint32_t ordinal : {hal::kComputeOrdinal, hal::kCopyOrdinal}) {
        const uint32_t engines = ordinal == hal::kComputeOrdinal ? p.compute_engines : p.copy_engines;
        for (uint32_t index = 0; index < engines; ++index) {
            std::shared_ptr<hal::Queue> q;
            ASSERT_EQ(dev->create_queue(ordinal, index, &q), ZE_RESULT_SUCCESS);
            EXPECT_EQ(q->ordinal(), ordinal);
            EXPECT_EQ(q->index(), index);
            Memory src(dev, hal::MemoryKind::host, 1 << 16);
            Memory mid(dev, hal::MemoryKind::device, 1 << 16);
            Memory dst(dev, hal::MemoryKind::shared, 1 << 16);
            std::iota(src.as(), src.as() + (1 << 16), static_cast<uint8_t>(ordinal + index));
            copy_and_wait(*q, mid.ptr, src.ptr, 1 << 16);
            copy_and_wait(*q, dst.ptr, mid.ptr, 1 << 16);
            EXPECT_EQ(std::memcmp(src.ptr, dst.ptr, 1 << 16), 0);
        }
        std::shared_ptr<hal::Queue> none;
        EXPECT_EQ(dev->create_queue(ordinal, engines, &none), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
    std::shared_ptr<hal::Queue> none;
    EXPECT_EQ(dev->create_queue(2, 0, &none), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(LevelZeroQueue, FillsWithEveryPatternSize) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Memory m(dev, hal::MemoryKind::device, 1024);
    std::array<uint8_t, 128> pattern{};
    std::iota(pattern.begin(), pattern.end(), 1);
    for (size_t size = 1; size <= 128; size *= 2) {
        ASSERT_EQ(q->append_fill(m.ptr, pattern.data(), size, 1024, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
        const std::vector<uint8_t> got = read_back(dev, *q, m.ptr, 1024);
        for (size_t i = 0; i < 1024; ++i) ASSERT_EQ(got[i], pattern[i % size]) << size << " " << i;
    }
}

TEST(LevelZeroQueue, EventsOrderCommandsAcrossQueues) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Queue> a, b;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &a), ZE_RESULT_SUCCESS);
    const uint32_t copy_ordinal = dev->properties().copy_engines ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    ASSERT_EQ(dev->create_queue(copy_ordinal, 0, &b), ZE_RESULT_SUCCESS);
    Events ev(dev, 3);
    Memory host(dev, hal::MemoryKind::host, 4096);
    Memory mid(dev, hal::MemoryKind::device, 4096);
    Memory out(dev, hal::MemoryKind::host, 4096);
    std::memset(host.ptr, 0x77, 4096);
    // b waits for a host signal, then for a's copy.
    const hal::EventRef gate[] = {ev.events[0]};
    ASSERT_EQ(a->append_copy(mid.ptr, host.ptr, 4096, ev.events[1], gate), ZE_RESULT_SUCCESS);
    const hal::EventRef after_a[] = {ev.events[1]};
    ASSERT_EQ(b->append_copy(out.ptr, mid.ptr, 4096, ev.events[2], after_a), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[2]->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(ev.events[2]->host_synchronize(0), ZE_RESULT_NOT_READY);
    ASSERT_EQ(ev.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[2]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[1]->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(out.as()[4095], 0x77);
    ASSERT_EQ(ev.events[2]->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[2]->query(), ZE_RESULT_NOT_READY);
}

TEST(LevelZeroQueue, HostSynchronizeTimesOutWhileACommandWaitsAndThenCompletes) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Events ev(dev, 2);
    const hal::EventRef gate[] = {ev.events[0]};
    ASSERT_EQ(q->append_barrier(ev.events[1], gate), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->host_synchronize(1'000'000), ZE_RESULT_NOT_READY);
    ASSERT_EQ(ev.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[1]->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
}

TEST(LevelZeroQueue, ResetsAndTimestampsRunInQueueOrder) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    expect_steps_run_in_queue_order(dev, hal::kComputeOrdinal);
}

TEST(LevelZeroQueue, BadInput) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    Memory a(dev, hal::MemoryKind::device, 4096);
    Memory b(dev, hal::MemoryKind::device, 4096);
    // Pages not mapped (system memory itself is an operand, passed to Level Zero as it is).
    auto* unmapped = reinterpret_cast<int*>(uintptr_t{4096});
    EXPECT_EQ(q->append_copy(nullptr, b.ptr, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr, nullptr, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_copy(a.ptr, b.ptr, 0, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr, b.ptr, 4097, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_copy(a.ptr, unmapped, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(a.as() + 8, a.ptr, 64, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    const uint8_t pattern[4] = {1, 2, 3, 4};
    EXPECT_EQ(q->append_fill(a.ptr, nullptr, 4, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 3, 63, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 4, 62, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(a.ptr, pattern, 256, 512, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_fill(unmapped, pattern, 4, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Events of another device, null waits, cancel.
    std::shared_ptr<hal::Backend> sim;
    ASSERT_EQ(hal::find_backend("sim", &sim), ZE_RESULT_SUCCESS);
    Events foreign(sim->devices().front(), 1);
    Events mine(dev, 1);
    EXPECT_EQ(q->append_barrier(foreign.events[0], {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_barrier(nullptr, foreign.events), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const hal::EventRef null_wait[] = {nullptr};
    EXPECT_EQ(q->append_barrier(nullptr, null_wait), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->cancel(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->cancel(foreign.events[0]), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->cancel(mine.events[0]), ZE_RESULT_NOT_READY);
    EXPECT_FALSE(dev->owns_event(*foreign.events[0]));
    EXPECT_TRUE(dev->owns_event(*mine.events[0]));
}

TEST(LevelZeroQueue, HostMemoryOfAnotherBackendGoesThroughStaging) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Backend> sim;
    ASSERT_EQ(hal::find_backend("sim", &sim), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    constexpr size_t kSize = (size_t{8} << 20) + 4096;  // more than one staging buffer
    Memory other(sim->devices().front(), hal::MemoryKind::host, kSize);
    Memory back(sim->devices().front(), hal::MemoryKind::host, kSize);
    Memory mine(dev, hal::MemoryKind::host, kSize);
    Memory device(dev, hal::MemoryKind::device, kSize);
    for (size_t i = 0; i < kSize; ++i) other.as()[i] = static_cast<uint8_t>(i * 7);
    Events ev(dev, 2);
    ASSERT_EQ(q->append_copy(device.ptr, other.ptr, kSize, ev.events[0], {}), ZE_RESULT_SUCCESS);
    const hal::EventRef after[] = {ev.events[0]};
    ASSERT_EQ(q->append_copy(back.ptr, device.ptr, kSize, ev.events[1], after), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[1]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(other.ptr, back.ptr, kSize), 0);
    // Host to host of two backends, and a fill of the other backend's memory.
    copy_and_wait(*q, mine.ptr, other.ptr, kSize);
    EXPECT_EQ(std::memcmp(other.ptr, mine.ptr, kSize), 0);
    const uint32_t word = 0xA1B2C3D4;
    ASSERT_EQ(q->append_fill(other.ptr, &word, 4, kSize, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    uint32_t last = 0;
    std::memcpy(&last, other.as() + kSize - 4, 4);
    EXPECT_EQ(last, word);
}

}  // namespace
}  // namespace zehal::test

namespace zehal::test {
namespace {

TEST(LevelZeroQueue, ASimDeviceCopiesLevelZeroHostMemory) {
    // Host memory is host memory (contract §2.2): the backend's host allocations are in the
    // process-wide index, where a device of another backend finds them.
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Backend> sim;
    ASSERT_EQ(hal::find_backend("sim", &sim), ZE_RESULT_SUCCESS);
    const hal::DeviceRef& other = sim->devices().front();
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(other->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Memory mine(dev, hal::MemoryKind::host, 1 << 16);
    Memory back(dev, hal::MemoryKind::host, 1 << 16);
    Memory device(other, hal::MemoryKind::device, 1 << 16);
    std::iota(mine.as(), mine.as() + (1 << 16), uint8_t{3});
    copy_and_wait(*q, device.ptr, mine.ptr, 1 << 16);
    copy_and_wait(*q, back.ptr, device.ptr, 1 << 16);
    EXPECT_EQ(std::memcmp(mine.ptr, back.ptr, 1 << 16), 0);
    // Its device memory is still not the sim's.
    Memory own_device(dev, hal::MemoryKind::device, 64);
    EXPECT_EQ(q->append_copy(device.ptr, own_device.ptr, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace zehal::test
