// Queues of the CUDA backend: copies between every pair of memory kinds, fills of every
// pattern size, events, waits on host-signalled and later-signalled events, barriers, and
// every bad input with its code.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "cuda_fixture.hpp"
#include "support/freed_operands.hpp"
#include "support/queued_steps.hpp"

namespace zehal::test {
namespace {

constexpr hal::MemoryKind kKinds[] = {hal::MemoryKind::host, hal::MemoryKind::device, hal::MemoryKind::shared};

std::shared_ptr<hal::Queue> make_queue(const hal::DeviceRef& dev, uint32_t ordinal = hal::kCopyOrdinal) {
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(dev->create_queue(ordinal, 0, &q), ZE_RESULT_SUCCESS);
    return q;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(gen());
    return v;
}

// An event of no CUDA pool: what a queue must refuse.
class ForeignEvent final : public hal::Event, public hal::EventPool {
public:
    ze_result_t query() override { return ZE_RESULT_SUCCESS; }
    ze_result_t host_synchronize(uint64_t) override { return ZE_RESULT_SUCCESS; }
    ze_result_t host_signal() override { return ZE_RESULT_SUCCESS; }
    ze_result_t host_reset() override { return ZE_RESULT_SUCCESS; }
    ze_result_t query_kernel_timestamps(uint32_t*, hal::KernelTimestampResult*) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    ze_result_t query_synchronized_timestamps(uint32_t*, hal::KernelTimestampResult*) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    hal::EventPool& pool() override { return *this; }
    uint32_t count() const override { return 1; }
    uint32_t flags() const override { return 0; }
    ze_result_t event(uint32_t, hal::EventRef*) override { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
};

TEST(CudaQueue, CopiesBetweenEveryPairOfKinds) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev);
    constexpr size_t kSize = (1 << 20) + 3;
    const std::vector<uint8_t> data = random_bytes(kSize, 7);
    Memory source(dev, hal::MemoryKind::host, kSize);
    std::memcpy(source.ptr, data.data(), kSize);
    for (hal::MemoryKind from : kKinds) {
        for (hal::MemoryKind to : kKinds) {
            SCOPED_TRACE(testing::Message() << static_cast<int>(from) << " -> " << static_cast<int>(to));
            Memory a(dev, from, kSize), b(dev, to, kSize);
            copy_and_wait(*q, a.ptr, source.ptr, kSize);
            copy_and_wait(*q, b.ptr, a.ptr, kSize);
            EXPECT_EQ(read_back(dev, *q, b.ptr, kSize), data);
        }
    }
}

TEST(CudaQueue, FillsEveryPatternSizeAtEveryOffset) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev, hal::kComputeOrdinal);
    constexpr size_t kBytes = 4096;
    Memory target(dev, hal::MemoryKind::device, kBytes + 256);
    Memory host_target(dev, hal::MemoryKind::host, kBytes + 256);
    for (size_t psize = 1; psize <= 128; psize *= 2) {
        for (bool uniform : {false, true}) {
            std::vector<uint8_t> pattern = random_bytes(psize, static_cast<uint32_t>(psize));
            if (uniform) std::fill(pattern.begin(), pattern.end(), uint8_t{0xAB});
            for (size_t offset : {0, 1, 2, 3, 4, 8}) {
                SCOPED_TRACE(testing::Message() << "pattern " << psize << " offset " << offset << " uniform " << uniform);
                for (Memory* m : {&target, &host_target}) {
                    const std::vector<uint8_t> zeros(kBytes + 256, 0);
                    ASSERT_EQ(q->append_fill(m->ptr, zeros.data(), 1, kBytes + 256, nullptr, {}), ZE_RESULT_SUCCESS);
                    ASSERT_EQ(q->append_fill(m->as() + offset, pattern.data(), psize, kBytes, nullptr, {}),
                              ZE_RESULT_SUCCESS);
                    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
                    const std::vector<uint8_t> got = read_back(dev, *q, m->ptr, kBytes + 256);
                    for (size_t i = 0; i < kBytes + 256; ++i) {
                        const uint8_t want = i >= offset && i < offset + kBytes ? pattern[(i - offset) % psize] : 0;
                        ASSERT_EQ(got[i], want) << "byte " << i;
                    }
                }
            }
        }
    }
}

TEST(CudaQueue, SignalQueryResetAndHostSignal) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev);
    Events ev(dev, 2);
    Memory a(dev, hal::MemoryKind::host, 4096), b(dev, hal::MemoryKind::device, 4096);
    hal::EventRef e = ev.events[0];
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_synchronize(0), ZE_RESULT_NOT_READY);
    ASSERT_EQ(q->append_copy(b.ptr, a.ptr, 4096, e, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(&e->pool(), ev.pool.get());
    hal::EventRef out;
    EXPECT_EQ(ev.pool->event(2, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(ev.pool->event(0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(CudaQueue, CommandWaitsForAHostSignal) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev);
    Events ev(dev, 2);
    hal::EventRef gate = ev.events[0], done = ev.events[1];
    const std::vector<uint8_t> data = random_bytes(4096, 3);
    Memory src(dev, hal::MemoryKind::host, 4096), dst(dev, hal::MemoryKind::device, 4096);
    std::memcpy(src.ptr, data.data(), 4096);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q->append_copy(dst.ptr, src.ptr, 4096, done, waits), ZE_RESULT_SUCCESS);
    // Held back by the gate: the timeouts only bound the wait, the states are what is checked.
    EXPECT_EQ(done->host_synchronize(50'000'000), ZE_RESULT_NOT_READY);
    EXPECT_EQ(q->host_synchronize(1'000'000), ZE_RESULT_NOT_READY);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(done->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(dev, *q, dst.ptr, 4096), data);
}

TEST(CudaQueue, WaitOnAnEventSignalledLaterByAnotherQueue) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto first = make_queue(dev), second = make_queue(dev, hal::kComputeOrdinal);
    Events ev(dev, 2);
    const std::vector<uint8_t> data = random_bytes(1 << 16, 5);
    Memory src(dev, hal::MemoryKind::host, 1 << 16), mid(dev, hal::MemoryKind::device, 1 << 16),
        dst(dev, hal::MemoryKind::shared, 1 << 16);
    std::memcpy(src.ptr, data.data(), data.size());
    const hal::EventRef waits[] = {ev.events[0]};
    // The waiting command is submitted first; its event is signalled by a command after it.
    ASSERT_EQ(second->append_copy(dst.ptr, mid.ptr, data.size(), ev.events[1], waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(first->append_copy(mid.ptr, src.ptr, data.size(), ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[1]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(dst.ptr, data.data(), data.size()), 0);
}

TEST(CudaQueue, FireAndForgetThenBarrier) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev);
    constexpr size_t kCopies = 128, kChunk = 1024;
    const std::vector<uint8_t> data = random_bytes(kCopies * kChunk, 11);
    Memory src(dev, hal::MemoryKind::host, data.size()), dst(dev, hal::MemoryKind::device, data.size());
    std::memcpy(src.ptr, data.data(), data.size());
    for (size_t i = 0; i < kCopies; ++i)
        ASSERT_EQ(q->append_copy(dst.as() + i * kChunk, src.as() + i * kChunk, kChunk, nullptr, {}), ZE_RESULT_SUCCESS);
    Events ev(dev, 1);
    ASSERT_EQ(q->append_barrier(ev.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(dev, *q, dst.ptr, data.size()), data);
    EXPECT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_SUCCESS);
}

TEST(CudaQueue, AFreedOperandIsRefusedAfterCopiesThatUsedIt) {
    // Queues remember the operands of the copies before (hal::OperandCache).
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    expect_freed_operands_refused(dev, hal::kCopyOrdinal);
}

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
    // Pages not mapped (system memory is an operand: tests/cpp/hal_cuda/test_cuda_system_memory.cpp).
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
