// One check for the queues of every backend: an event reset, a global timestamp write and
// a kernel timestamp query are queue commands. Behind a wait on an event the host signals
// later they are appended at once and run only after it, in order; a refused query writes
// nothing.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "hal/device.hpp"
#include "hal/queue.hpp"

namespace zehal::test {

// Runs the check on a queue of engine group `ordinal` of `device`.
inline void expect_steps_run_in_queue_order(const hal::DeviceRef& device, uint32_t ordinal) {
    constexpr uint64_t kHangGuard = 20'000'000'000ull;
    constexpr size_t kBytes = 4096;
    constexpr size_t kResult = sizeof(hal::KernelTimestampResult);
    struct Allocation {
        hal::DeviceRef device;
        void* ptr = nullptr;
        Allocation(const hal::DeviceRef& d, hal::MemoryKind kind) : device(d) {
            EXPECT_EQ(d->allocate(kind, kBytes, 64, 0, 0, &ptr), ZE_RESULT_SUCCESS);
        }
        ~Allocation() {
            if (ptr) device->free(ptr);
        }
    };
    Allocation host(device, hal::MemoryKind::host);
    Allocation dev(device, hal::MemoryKind::device);
    ASSERT_TRUE(host.ptr && dev.ptr);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(device->create_queue(ordinal, 0, &q), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::EventPool> plain, timed;
    ASSERT_EQ(device->create_event_pool(3, hal::kPoolHostVisible, &plain), ZE_RESULT_SUCCESS);
    ASSERT_EQ(device->create_event_pool(1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp, &timed),
              ZE_RESULT_SUCCESS);
    hal::EventRef gate, victim, done, stamped;
    ASSERT_EQ(plain->event(0, &gate), ZE_RESULT_SUCCESS);
    ASSERT_EQ(plain->event(1, &victim), ZE_RESULT_SUCCESS);
    ASSERT_EQ(plain->event(2, &done), ZE_RESULT_SUCCESS);
    ASSERT_EQ(timed->event(0, &stamped), ZE_RESULT_SUCCESS);

    // An event with kernel timestamps to query.
    const uint8_t byte = 0x5A;
    ASSERT_EQ(q->append_fill(dev.ptr, &byte, 1, 64, stamped, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(stamped->host_synchronize(kHangGuard), ZE_RESULT_SUCCESS);
    hal::KernelTimestampResult expected{};
    uint32_t count = 1;
    ASSERT_EQ(stamped->query_kernel_timestamps(&count, &expected), ZE_RESULT_SUCCESS);

    auto* bytes = static_cast<uint8_t*>(host.ptr);
    auto* stamp = static_cast<uint64_t*>(host.ptr);
    std::memset(bytes, 0, kBytes);
    ASSERT_EQ(victim->host_signal(), ZE_RESULT_SUCCESS);
    const hal::EventRef gates[] = {gate};
    ASSERT_EQ(q->append_barrier(nullptr, gates), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_event_reset(victim), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_write_global_timestamp(stamp, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_write_global_timestamp(static_cast<uint64_t*>(dev.ptr), nullptr, {}), ZE_RESULT_SUCCESS);
    const hal::EventRef queried[] = {stamped};
    ASSERT_EQ(q->append_query_kernel_timestamps(queried, bytes + 64, nullptr, done, {}), ZE_RESULT_SUCCESS);
    // Nothing behind the gate ran.
    EXPECT_EQ(done->host_synchronize(1'000'000), ZE_RESULT_NOT_READY);
    EXPECT_EQ(victim->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(*stamp, 0u);

    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(done->host_synchronize(kHangGuard), ZE_RESULT_SUCCESS);
    EXPECT_EQ(victim->query(), ZE_RESULT_NOT_READY);
    EXPECT_GT(*stamp, 0u);
    EXPECT_EQ(std::memcmp(bytes + 64, &expected, kResult), 0);

    // Refused commands queue nothing and write nothing.
    std::memset(bytes, 0xAB, kBytes);
    const hal::EventRef two[] = {stamped, stamped};
    EXPECT_EQ(q->append_query_kernel_timestamps(two, bytes + kBytes - kResult - kResult / 2, nullptr, nullptr, {}),
              ZE_RESULT_ERROR_INVALID_SIZE);
    const size_t offsets[] = {0, kBytes - kResult / 2};
    EXPECT_EQ(q->append_query_kernel_timestamps(two, bytes, offsets, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(q->append_query_kernel_timestamps({}, bytes, nullptr, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    const hal::EventRef untimed[] = {victim};
    EXPECT_EQ(q->append_query_kernel_timestamps(untimed, bytes, nullptr, nullptr, {}),
              ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    const hal::EventRef null_event[] = {nullptr};
    EXPECT_EQ(q->append_query_kernel_timestamps(null_event, bytes, nullptr, nullptr, {}),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->append_event_reset(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(q->append_write_global_timestamp(reinterpret_cast<uint64_t*>(bytes + 4), nullptr, {}),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(q->host_synchronize(kHangGuard), ZE_RESULT_SUCCESS);
    for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(bytes[i], 0xAB) << "byte " << i;
}

}  // namespace zehal::test
