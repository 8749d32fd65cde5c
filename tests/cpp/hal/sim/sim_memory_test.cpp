// Memory of the sim device: allocate, free, pointer_info, capacity, fault injection.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "hal/sim/sim_device.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

using hal::MemoryKind;
using test::Memory;

constexpr MemoryKind kKinds[] = {MemoryKind::host, MemoryKind::device, MemoryKind::shared};

TEST(SimMemory, PropertiesFollowTheConfig) {
    sim::SimConfig c;
    c.copy_engines = 3;
    c.compute_engines = 2;
    c.memory_bytes = 8u << 20;
    c.timer_hz = 12'000'000;
    c.kernel_timestamp_valid_bits = 36;
    c.timestamp_valid_bits = 56;
    c.subdevices = 2;
    auto d = test::sim_device(c);
    const hal::DeviceProperties& p = d->properties();
    EXPECT_EQ(d->backend_name(), "sim");
    EXPECT_FALSE(p.name.empty());
    EXPECT_EQ(p.memory_bytes, 8u << 20);
    EXPECT_EQ(p.max_allocation_bytes, 8u << 20);
    EXPECT_EQ(p.timer_hz, 12'000'000u);
    EXPECT_EQ(p.kernel_timestamp_valid_bits, 36u);
    EXPECT_EQ(p.timestamp_valid_bits, 56u);
    EXPECT_EQ(p.copy_engines, 3u);
    EXPECT_EQ(p.compute_engines, 2u);
    EXPECT_EQ(p.subdevices, 2u);
    EXPECT_EQ(p.memory_ordinals, 1u);
    EXPECT_EQ(p.timestamp_flags, hal::kTimestampKernel | hal::kTimestampSynchronized);
    EXPECT_TRUE(p.dma_buf_export);
    EXPECT_TRUE(p.tracer);
    EXPECT_NE(d->trace_source(), nullptr);
    EXPECT_FALSE(d->metric_groups().empty());
    // Two devices are told apart.
    auto other = test::sim_device(c);
    EXPECT_NE(other->properties().uuid, p.uuid);
    EXPECT_NE(other->properties().name, p.name);
}

TEST(SimMemory, AllocateEveryKindWithAlignment) {
    auto d = test::sim_device();
    for (MemoryKind kind : kKinds) {
        for (size_t alignment :
             {size_t{0}, size_t{1}, size_t{8}, size_t{64}, size_t{4096}, size_t{1} << 16, size_t{1} << 21}) {
            for (size_t size : {size_t{1}, size_t{100}, size_t{3} << 20}) {
                void* p = nullptr;
                ASSERT_EQ(d->allocate(kind, size, alignment, 0, 0, &p), ZE_RESULT_SUCCESS);
                const size_t expect = alignment ? alignment : sim::SimDevice::kDefaultAlignment;
                EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % expect, 0u);
                hal::PointerInfo info;
                ASSERT_EQ(d->pointer_info(p, &info), ZE_RESULT_SUCCESS);
                EXPECT_EQ(info.kind, kind);
                EXPECT_EQ(info.base, p);
                EXPECT_EQ(info.size, size);
                EXPECT_EQ(info.alignment, expect);
                EXPECT_FALSE(info.imported);
                ASSERT_EQ(d->pointer_info(static_cast<char*>(p) + size - 1, &info), ZE_RESULT_SUCCESS);
                EXPECT_EQ(info.base, p);
                EXPECT_EQ(d->free(p), ZE_RESULT_SUCCESS);
            }
        }
    }
}

TEST(SimMemory, AllocationFlags) {
    auto d = test::sim_device();
    void* p = nullptr;
    for (uint32_t flags : {0u, 1u, 2u, 4u, 8u, 0xFu}) {
        ASSERT_EQ(d->allocate(MemoryKind::device, 64, 0, flags, 0, &p), ZE_RESULT_SUCCESS);
        EXPECT_EQ(d->free(p), ZE_RESULT_SUCCESS);
    }
}

// Host memory has no size limit but the system's (the HAL's bad-input checks are the
// contract suite's, tests/cpp/hal/contract/).
TEST(SimMemory, HostMemoryIsBoundedByWhatTheSystemGives) {
    auto d = test::sim_device();
    void* p = reinterpret_cast<void*>(0x1234);
    EXPECT_EQ(d->allocate(MemoryKind::host, size_t{1} << 62, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    EXPECT_EQ(d->allocate(MemoryKind::host, ~size_t{0} - 4096, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    EXPECT_EQ(p, reinterpret_cast<void*>(0x1234));  // untouched on failure
    // Still usable.
    Memory ok(d, MemoryKind::device, 64);
    EXPECT_NE(ok.ptr(), nullptr);
}

TEST(SimMemory, PointerInfoEndsWithTheAllocation) {
    auto d = test::sim_device();
    Memory m(d, MemoryKind::shared, 128);
    hal::PointerInfo info;
    EXPECT_EQ(d->pointer_info(m.get() + 127, &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->pointer_info(m.get() + 128, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(SimMemory, HostMemoryIsSharedByEverySimDevice) {
    auto a = test::sim_device();
    auto b = test::sim_device();
    void* h = nullptr;
    ASSERT_EQ(a->allocate(MemoryKind::host, 4096, 0, 0, 0, &h), ZE_RESULT_SUCCESS);
    std::memset(h, 0x3C, 4096);
    hal::PointerInfo info;
    ASSERT_EQ(b->pointer_info(h, &info), ZE_RESULT_SUCCESS);
    EXPECT_EQ(info.kind, MemoryKind::host);
    // b copies to and from it on its engines.
    Memory dev(b, MemoryKind::device, 4096);
    Memory back(b, MemoryKind::host, 4096);
    auto q = test::queue(b);
    ASSERT_EQ(q->append_copy(dev.ptr(), h, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(back.ptr(), dev.ptr(), 4096, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(test::kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(back.ptr(), h, 4096), 0);
    // And frees it.
    EXPECT_EQ(b->free(h), ZE_RESULT_SUCCESS);
    EXPECT_EQ(a->free(h), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(SimMemory, OutOfDeviceMemoryAtCapacity) {
    sim::SimConfig c;
    c.memory_bytes = 1u << 20;
    auto d = test::sim_device(c);
    void* a = nullptr;
    void* b = nullptr;
    void* x = nullptr;
    ASSERT_EQ(d->allocate(MemoryKind::device, 512u << 10, 0, 0, 0, &a), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->allocate(MemoryKind::shared, 256u << 10, 0, 0, 0, &b), ZE_RESULT_SUCCESS);  // counts too
    EXPECT_EQ(d->allocate(MemoryKind::device, (256u << 10) + 1, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(d->allocate(MemoryKind::shared, 512u << 10, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    // Host memory is not device memory.
    Memory host(d, MemoryKind::host, 2u << 20);
    // Exactly what is left still fits; then nothing does.
    ASSERT_EQ(d->allocate(MemoryKind::device, 256u << 10, 0, 0, 0, &x), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->allocate(MemoryKind::device, 1, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    // Freeing gives it back.
    EXPECT_EQ(d->free(a), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->allocate(MemoryKind::device, 512u << 10, 0, 0, 0, &a), ZE_RESULT_SUCCESS);
    for (void* p : {a, b, x}) EXPECT_EQ(d->free(p), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->allocate(MemoryKind::device, 1u << 20, 0, 0, 0, &a), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(a), ZE_RESULT_SUCCESS);
}

TEST(SimMemory, FailAllocationAfterN) {
    sim::SimConfig c;
    c.fail_allocation_after = 2;
    auto d = test::sim_device(c);
    void* a = nullptr;
    void* b = nullptr;
    void* x = nullptr;
    ASSERT_EQ(d->allocate(MemoryKind::host, 4096, 0, 0, 0, &a), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->allocate(MemoryKind::device, 4096, 0, 0, 0, &b), ZE_RESULT_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(d->allocate(MemoryKind::device, 64, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
        EXPECT_EQ(d->allocate(MemoryKind::shared, 64, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
        EXPECT_EQ(d->allocate(MemoryKind::host, 64, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    }
    // What was allocated still works.
    std::memset(a, 9, 4096);
    auto q = test::queue(d);
    ASSERT_EQ(q->append_copy(b, a, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(test::kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(a), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(b), ZE_RESULT_SUCCESS);
    // Freeing does not reset the count.
    EXPECT_EQ(d->allocate(MemoryKind::host, 64, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);

    c.fail_allocation_after = 0;
    auto none = test::sim_device(c);
    EXPECT_EQ(none->allocate(MemoryKind::device, 64, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(none->allocate(MemoryKind::host, 64, 0, 0, 0, &x), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    // Bad input is still reported as such.
    EXPECT_EQ(none->allocate(MemoryKind::host, 0, 0, 0, 0, &x), ZE_RESULT_ERROR_INVALID_SIZE);
}

TEST(SimMemory, CreateQueueErrors) {
    sim::SimConfig c;
    c.compute_engines = 2;
    c.copy_engines = 1;
    auto d = test::sim_device(c);
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(d->create_queue(0, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(d->create_queue(0, 2, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->create_queue(1, 1, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->create_queue(2, 0, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(d->create_queue(~0u, 0, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q, nullptr);
    ASSERT_EQ(d->create_queue(0, 1, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->ordinal(), 0u);
    EXPECT_EQ(q->index(), 1u);
    ASSERT_EQ(d->create_queue(1, 0, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->ordinal(), 1u);

    c.copy_engines = 0;
    auto no_copy = test::sim_device(c);
    EXPECT_EQ(no_copy->create_queue(1, 0, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(SimMemory, GlobalTimestamps) {
    sim::SimConfig c;
    c.timestamp_valid_bits = 64;
    c.start_ticks = 1ull << 40;
    c.timer_hz = 1'000'000;
    auto d = test::sim_device(c);
    uint64_t host = 0;
    uint64_t ticks = 0;
    const uint64_t before = host_now_ns();
    ASSERT_EQ(d->global_timestamps(&host, &ticks), ZE_RESULT_SUCCESS);
    EXPECT_LE(before, host);
    EXPECT_LE(host, host_now_ns());
    EXPECT_GE(ticks, 1ull << 40);
    uint64_t host2 = 0;
    uint64_t ticks2 = 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    ASSERT_EQ(d->global_timestamps(&host2, &ticks2), ZE_RESULT_SUCCESS);
    // Sampled together: the tick difference is the host difference at 1 MHz, within a tick.
    const uint64_t expect = (host2 - host) / 1000;
    EXPECT_LE(ticks2 - ticks, expect + 1);
    EXPECT_GE(ticks2 - ticks + 1, expect);

    c.timestamp_valid_bits = 8;
    c.start_ticks = 250;
    auto narrow = test::sim_device(c);
    for (int i = 0; i < 50; ++i) {
        ASSERT_EQ(narrow->global_timestamps(&host, &ticks), ZE_RESULT_SUCCESS);
        EXPECT_LE(ticks, 255u);
    }
}

}  // namespace
}  // namespace zehal
