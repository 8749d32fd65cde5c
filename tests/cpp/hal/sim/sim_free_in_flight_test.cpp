// Freeing memory that queued or running commands use (docs/lifetimes.md): the free waits
// until they are over, so the engine never touches unmapped memory and the data arrives.
// Each scenario runs in a child process (a crash fails the test, not the run), with an
// alarm against a hang.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "hal/pointer_registry.hpp"
#include "support/in_child.hpp"
#include "support/sim_fixture.hpp"

namespace zehal::test {
namespace {

constexpr size_t kBusyBytes = 32u << 20;    // keeps the engine busy (160 ms at the throttle)
constexpr size_t kCopyBytes = 4u << 20;     // the copy queued behind it
constexpr uint64_t kThrottle = 200u << 20;  // bytes per second per engine

// A throttled device, so that copies stay queued while the test frees their memory.
hal::DeviceRef throttled() {
    sim::SimConfig config;
    config.bandwidth_bytes_per_s = kThrottle;
    return sim_device(config);
}

void* allocate(const hal::DeviceRef& d, hal::MemoryKind kind, size_t size) {
    void* p = nullptr;
    EXPECT_EQ(d->allocate(kind, size, 0, 0, 0, &p), ZE_RESULT_SUCCESS);
    return p;
}

// A command queued behind a busy copy on one queue, and which of its operands is freed
// while it waits.
struct QueuedCommand {
    const char* name;          // the test's name suffix
    bool fill;                 // a fill of dst; else a copy from src to dst
    hal::MemoryKind dst_kind;  // the destination's memory kind
    hal::MemoryKind src_kind;  // the source's (copies only)
    bool free_src;             // copies: the source is freed, else the destination
};

class SimFreeInFlightQueued : public testing::TestWithParam<QueuedCommand> {};

// Queues the command (kCopyBytes; its event signals its end) behind the busy copy, then
// frees its operand at once: the free returns only once the command is done, and a new
// command on the freed memory is refused.
void free_while_queued(const QueuedCommand& c) {
    const hal::DeviceRef d = throttled();
    auto q = queue(d);
    auto events = pool(d, 1);
    const hal::EventRef done = event(events);
    void* busy_src = allocate(d, hal::MemoryKind::host, kBusyBytes);
    void* busy_dst = allocate(d, hal::MemoryKind::device, kBusyBytes);
    void* src = c.fill ? nullptr : allocate(d, c.src_kind, kCopyBytes);
    void* dst = allocate(d, c.dst_kind, kCopyBytes);
    ASSERT_TRUE(busy_src && busy_dst && dst && (c.fill || src));
    std::vector<unsigned char> pattern(kCopyBytes);
    for (size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<unsigned char>(i * 7 + 3);
    if (src) std::memcpy(src, pattern.data(), kCopyBytes);  // sim memory is host memory underneath

    ASSERT_EQ(q->append_copy(busy_dst, busy_src, kBusyBytes, nullptr, {}), ZE_RESULT_SUCCESS);
    if (c.fill)
        ASSERT_EQ(q->append_fill(dst, pattern.data(), 4, kCopyBytes, done, {}), ZE_RESULT_SUCCESS);
    else
        ASSERT_EQ(q->append_copy(dst, src, kCopyBytes, done, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(done->query(), ZE_RESULT_NOT_READY);  // still queued behind the busy copy
    void* victim = c.free_src ? src : dst;
    ASSERT_EQ(d->free(victim), ZE_RESULT_SUCCESS);
    EXPECT_EQ(done->query(), ZE_RESULT_SUCCESS);  // the free waited for the command
    if (c.free_src) {
        EXPECT_EQ(std::memcmp(dst, pattern.data(), kCopyBytes), 0);
    }
    if (void* other = c.free_src ? dst : src) {
        EXPECT_EQ(d->free(other), ZE_RESULT_SUCCESS);
    }
    // Gone now: a new copy from or to it is refused.
    EXPECT_EQ(q->append_copy(busy_dst, victim, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(busy_src), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->free(busy_dst), ZE_RESULT_SUCCESS);
}

TEST_P(SimFreeInFlightQueued, FreeingAnOperandOfAQueuedCommandWaitsForIt) {
    const QueuedCommand c = GetParam();
    in_child([c] { free_while_queued(c); });
}

constexpr hal::MemoryKind kHost = hal::MemoryKind::host;
constexpr hal::MemoryKind kDevice = hal::MemoryKind::device;
constexpr hal::MemoryKind kShared = hal::MemoryKind::shared;

INSTANTIATE_TEST_SUITE_P(Commands, SimFreeInFlightQueued,
                         testing::Values(QueuedCommand{"CopySourceHostToDevice", false, kDevice, kHost, true},
                                         QueuedCommand{"CopyDestinationHostToDevice", false, kDevice, kHost, false},
                                         QueuedCommand{"CopySourceDeviceToHost", false, kHost, kDevice, true},
                                         QueuedCommand{"CopyDestinationSharedToHost", false, kHost, kShared, false},
                                         QueuedCommand{"FillDestinationDevice", true, kDevice, kDevice, false}),
                         [](const testing::TestParamInfo<QueuedCommand>& info) { return info.param.name; });

// A copy that waits for an event: its free waits until the event comes and the copy ran
// (holding no lock the signaller or the engine needs).
TEST(SimFreeInFlight, AFreeWaitsForACopyThatWaitsForAnEvent) {
    in_child([] {
        const hal::DeviceRef d = sim_device();
        auto q = queue(d);
        auto events = pool(d, 2);
        const hal::EventRef gate = event(events, 0);
        const hal::EventRef done = event(events, 1);
        void* src = allocate(d, hal::MemoryKind::host, kCopyBytes);
        void* dst = allocate(d, hal::MemoryKind::device, kCopyBytes);
        std::memset(src, 0x5C, kCopyBytes);
        const hal::EventRef waits[] = {gate};
        ASSERT_EQ(q->append_copy(dst, src, kCopyBytes, done, waits), ZE_RESULT_SUCCESS);
        std::atomic<bool> freed{false};
        std::atomic<bool> done_when_freed{false};
        std::thread freer([&] {
            EXPECT_EQ(d->free(src), ZE_RESULT_SUCCESS);
            done_when_freed = done->query() == ZE_RESULT_SUCCESS;
            freed = true;
        });
        EXPECT_EQ(done->query(), ZE_RESULT_NOT_READY);
        EXPECT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
        freer.join();
        EXPECT_TRUE(freed);
        EXPECT_TRUE(done_when_freed);
        EXPECT_EQ(static_cast<unsigned char*>(dst)[kCopyBytes - 1], 0x5C);
        EXPECT_EQ(d->free(dst), ZE_RESULT_SUCCESS);
    });
}

// Cancelled or dropped, a command gives its memory back too: a free waiting for a copy that
// waits forever returns once the device is lost (the copy is dropped, never run).
TEST(SimFreeInFlight, LosingTheDeviceReleasesAWaitingFree) {
    in_child([] {
        const hal::DeviceRef d = sim_device();
        auto q = queue(d);
        auto events = pool(d, 1);
        const hal::EventRef never = event(events);
        void* src = allocate(d, hal::MemoryKind::host, kCopyBytes);
        void* dst = allocate(d, hal::MemoryKind::device, kCopyBytes);
        const hal::EventRef waits[] = {never};
        ASSERT_EQ(q->append_copy(dst, src, kCopyBytes, nullptr, waits), ZE_RESULT_SUCCESS);
        std::thread freer([&] {
            const ze_result_t r = d->free(dst);
            EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_DEVICE_LOST) << r;
        });
        EXPECT_EQ(d->lose(), ZE_RESULT_SUCCESS);
        freer.join();
        EXPECT_EQ(d->free(src), ZE_RESULT_ERROR_DEVICE_LOST);
    });
}

// The registry's holds: a remove waits for each hold taken before it, and none after.
TEST(PointerRegistryHolds, RemoveWaitsForEveryHold) {
    hal::PointerRegistry registry;
    static char memory[4096];
    hal::Allocation a;
    a.info.base = memory;
    a.info.size = sizeof memory;
    ASSERT_EQ(registry.insert(a), ZE_RESULT_SUCCESS);
    hal::PointerRegistry::InFlight* first = nullptr;
    hal::PointerRegistry::InFlight* second = nullptr;
    hal::Allocation found;
    ASSERT_EQ(registry.hold_range(memory + 16, 64, &found, &first), ZE_RESULT_SUCCESS);
    EXPECT_EQ(found.info.base, memory);
    ASSERT_EQ(registry.hold_range(memory, sizeof memory, nullptr, &second), ZE_RESULT_SUCCESS);
    EXPECT_EQ(registry.hold_range(memory, sizeof memory + 1, nullptr, &second), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(registry.in_flight(memory + 100), 2u);
    std::atomic<bool> removed{false};
    std::thread remover([&] {
        EXPECT_TRUE(registry.remove(memory, nullptr));
        removed = true;
    });
    hal::PointerRegistry::release(first);
    EXPECT_FALSE(removed);  // one hold is left
    hal::PointerRegistry::release(second);
    remover.join();
    EXPECT_TRUE(removed);
    EXPECT_EQ(registry.hold_range(memory, 1, nullptr, &first), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(registry.in_flight(memory), 0u);
    hal::PointerRegistry::release(nullptr);  // nothing
}

// Threads holding and releasing while another frees: no hold outlives the remove.
TEST(PointerRegistryHolds, HoldsUnderThreadsEndBeforeTheRemove) {
    for (int round = 0; round < 50; ++round) {
        hal::PointerRegistry registry;
        static char memory[256];
        hal::Allocation a;
        a.info.base = memory;
        a.info.size = sizeof memory;
        ASSERT_EQ(registry.insert(a), ZE_RESULT_SUCCESS);
        std::atomic<int> live{0};
        std::atomic<bool> removed{false};
        std::vector<std::thread> threads;
        for (int t = 0; t < 4; ++t) {
            threads.emplace_back([&] {
                for (;;) {
                    hal::PointerRegistry::InFlight* held = nullptr;
                    if (registry.hold_range(memory, 1, nullptr, &held) != ZE_RESULT_SUCCESS) return;
                    live.fetch_add(1);
                    EXPECT_FALSE(removed.load());
                    live.fetch_sub(1);
                    hal::PointerRegistry::release(held);
                }
            });
        }
        EXPECT_TRUE(registry.remove(memory, nullptr));
        removed = true;
        EXPECT_EQ(live.load(), 0);
        for (auto& t : threads) t.join();
    }
}

}  // namespace
}  // namespace zehal::test
