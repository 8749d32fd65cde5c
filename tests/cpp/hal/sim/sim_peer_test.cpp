// Several sim devices (contract §2.2, docs/devices.md): each reaches the others' memory as a
// peer's, copies and fills between them run on the engines of either device, a lost peer's
// memory is refused, and device memory of another backend has no path.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "hal/host_memory.hpp"
#include "hal/pointer_registry.hpp"
#include "support/in_child.hpp"
#include "support/sim_fixture.hpp"

namespace zehal::test {
namespace {

using hal::MemoryKind;

// Copies `size` bytes on `q` and waits.
ze_result_t copy_and_wait(const std::shared_ptr<hal::Queue>& q, void* dst, const void* src, size_t size) {
    if (ze_result_t r = q->append_copy(dst, src, size, nullptr, {}); r != ZE_RESULT_SUCCESS) return r;
    return q->host_synchronize(kHangGuardNs);
}

// The bytes of device memory `p` of `d`, read back through a queue of `d`.
std::vector<unsigned char> read_back(const hal::DeviceRef& d, const void* p, size_t size) {
    Memory host(d, MemoryKind::host, size);
    EXPECT_EQ(copy_and_wait(queue(d), host.ptr(), p, size), ZE_RESULT_SUCCESS);
    return {host.get(), host.get() + size};
}

TEST(SimPeer, DevicesAccessEachOther) {
    sim::SimConfig config;
    config.link_bandwidth_bytes_per_s = 50'000'000'000;
    auto a = sim_device(config);
    auto b = sim_device(config);
    EXPECT_TRUE(a->can_access_peer(*b));
    EXPECT_TRUE(b->can_access_peer(*a));
    EXPECT_TRUE(a->can_access_peer(*a));
    hal::PeerProperties p;
    ASSERT_EQ(a->peer_properties(*b, &p), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(p.access);
    EXPECT_TRUE(p.atomics);
    EXPECT_EQ(p.bandwidth_bytes_per_s, 50'000'000'000u);
}

// Device memory of a to b and back, on the engines of each device in turn, copies and fills,
// and device-to-device copies whose both ends are the other device's.
TEST(SimPeer, CopiesAndFillsInBothDirectionsOnEitherDevice) {
    auto a = sim_device();
    auto b = sim_device();
    constexpr size_t kBytes = 64u << 10;
    for (const hal::DeviceRef& runner : {a, b}) {
        for (uint32_t ordinal : {hal::kComputeOrdinal, hal::kCopyOrdinal}) {
            SCOPED_TRACE(runner == a ? "engine of a" : "engine of b");
            auto q = queue(runner, ordinal);
            Memory on_a(a, MemoryKind::device, kBytes);
            Memory on_b(b, MemoryKind::device, kBytes);
            Memory also_on_a(a, MemoryKind::shared, kBytes);
            Memory host(runner, MemoryKind::host, kBytes);
            for (size_t i = 0; i < kBytes; ++i) host.get()[i] = static_cast<unsigned char>(i * 7);
            ASSERT_EQ(copy_and_wait(q, on_a.ptr(), host.ptr(), kBytes), ZE_RESULT_SUCCESS);
            ASSERT_EQ(copy_and_wait(q, on_b.ptr(), on_a.ptr(), kBytes), ZE_RESULT_SUCCESS);       // a -> b
            ASSERT_EQ(copy_and_wait(q, also_on_a.ptr(), on_b.ptr(), kBytes), ZE_RESULT_SUCCESS);  // b -> a
            EXPECT_EQ(read_back(a, also_on_a.ptr(), kBytes),
                      std::vector<unsigned char>(host.get(), host.get() + kBytes));
            EXPECT_EQ(read_back(b, on_b.ptr(), kBytes), std::vector<unsigned char>(host.get(), host.get() + kBytes));
            const uint32_t pattern = 0xA1B2C3D4;
            ASSERT_EQ(q->append_fill(on_b.ptr(), &pattern, sizeof pattern, kBytes, nullptr, {}), ZE_RESULT_SUCCESS);
            ASSERT_EQ(q->append_fill(on_a.ptr(), &pattern, sizeof pattern, kBytes, nullptr, {}), ZE_RESULT_SUCCESS);
            ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
            const std::vector<unsigned char> filled = read_back(b, on_b.ptr(), kBytes);
            for (size_t i = 0; i < kBytes; i += 4) ASSERT_EQ(std::memcmp(&filled[i], &pattern, 4), 0) << i;
            EXPECT_EQ(read_back(a, on_a.ptr(), kBytes), filled);
        }
    }
}

// Every copy engine of both devices copies between the two at once, in both directions.
TEST(SimPeer, ConcurrentCopiesOnBothDevicesEngines) {
    sim::SimConfig config;
    config.copy_engines = 2;
    auto a = sim_device(config);
    auto b = sim_device(config);
    constexpr size_t kBytes = 256u << 10;
    constexpr int kRounds = 20;
    struct Lane {
        hal::DeviceRef runner;
        uint32_t index;
        hal::DeviceRef from;
        hal::DeviceRef to;
    };
    const Lane lanes[] = {{a, 0, a, b}, {a, 1, b, a}, {b, 0, b, a}, {b, 1, a, b}};
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int l = 0; l < 4; ++l) {
        threads.emplace_back([&, l] {
            const Lane& lane = lanes[l];
            auto q = queue(lane.runner, hal::kCopyOrdinal, lane.index);
            Memory src(lane.from, MemoryKind::device, kBytes);
            Memory dst(lane.to, MemoryKind::device, kBytes);
            Memory host(lane.runner, MemoryKind::host, kBytes);
            for (int round = 0; round < kRounds; ++round) {
                std::memset(host.ptr(), l * 16 + round, kBytes);
                bool ok = copy_and_wait(q, src.ptr(), host.ptr(), kBytes) == ZE_RESULT_SUCCESS;
                ok = ok && copy_and_wait(q, dst.ptr(), src.ptr(), kBytes) == ZE_RESULT_SUCCESS;
                std::memset(host.ptr(), 0, kBytes);
                ok = ok && copy_and_wait(q, host.ptr(), dst.ptr(), kBytes) == ZE_RESULT_SUCCESS;
                ok = ok && host.get()[0] == l * 16 + round && host.get()[kBytes - 1] == l * 16 + round;
                if (!ok) failures.fetch_add(1);
            }
        });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_EQ(failures.load(), 0);
}

// A peer copy's event of the engine's device: its kernel timestamps are that device's ticks
// (another device's event takes that device's: sim_peer_signal_test.cpp).
TEST(SimPeer, EventsAndTimestampsBelongToTheEnginesDevice) {
    auto a = sim_device();
    auto b = sim_device();
    Memory on_a(a, MemoryKind::device, 4096);
    Memory on_b(b, MemoryKind::device, 4096);
    auto q = queue(a);
    auto of_a = event(pool(a, 1, hal::kPoolKernelMappedTimestamp));
    uint64_t host_before = 0, ticks = 0;
    ASSERT_EQ(a->global_timestamps(&host_before, &ticks), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(on_a.ptr(), on_b.ptr(), 4096, of_a, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(of_a->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    uint32_t count = 1;
    hal::KernelTimestampResult ts[1] = {};
    ASSERT_EQ(of_a->query_synchronized_timestamps(&count, ts), ZE_RESULT_SUCCESS);
    EXPECT_GE(ts[0].global_start, host_before);
    EXPECT_LE(ts[0].global_start, ts[0].global_end);
}

// Commands of one device wait for events of another: signalled by the host, or by a command
// of the other device.
TEST(SimPeer, CommandsWaitForAnotherDevicesEvents) {
    auto a = sim_device();
    auto b = sim_device();
    Memory on_a(a, MemoryKind::device, 4096);
    Memory on_b(b, MemoryKind::device, 4096);
    Memory host(a, MemoryKind::host, 4096);
    std::memset(host.ptr(), 0x6D, 4096);
    auto qa = queue(a);
    auto qb = queue(b);
    auto of_a = pool(a, 2);
    const hal::EventRef by_host = event(of_a, 0);
    const hal::EventRef by_a = event(of_a, 1);
    auto done = event(pool(b, 1));
    const hal::EventRef wait_host[] = {by_host};
    const hal::EventRef wait_a[] = {by_a};
    // b: copy a's memory to b's once a's copy signalled by_a, itself behind the host's signal.
    ASSERT_EQ(qb->append_copy(on_b.ptr(), on_a.ptr(), 4096, done, wait_a), ZE_RESULT_SUCCESS);
    ASSERT_EQ(qa->append_copy(on_a.ptr(), host.ptr(), 4096, by_a, wait_host), ZE_RESULT_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(done->query(), ZE_RESULT_NOT_READY);
    ASSERT_EQ(by_host->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(done->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(b, on_b.ptr(), 4096), std::vector<unsigned char>(4096, 0x6D));
    EXPECT_TRUE(b->waits_for_event(*by_a));
    EXPECT_FALSE(b->owns_event(*by_a));
}

// A lost peer's memory: refused with DEVICE_LOST, the running device stays usable, and the
// lost device's memory is still given back.
TEST(SimPeer, ALostPeersMemoryIsRefused) {
    auto a = sim_device();
    auto b = sim_device();
    Memory on_a(a, MemoryKind::device, 4096);
    Memory on_b(b, MemoryKind::device, 4096);
    Memory host(a, MemoryKind::host, 4096);
    auto q = queue(a);
    ASSERT_EQ(copy_and_wait(q, on_b.ptr(), host.ptr(), 4096), ZE_RESULT_SUCCESS);
    ASSERT_EQ(b->lose(), ZE_RESULT_SUCCESS);
    const unsigned char v = 7;
    EXPECT_EQ(q->append_copy(on_a.ptr(), on_b.ptr(), 4096, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_copy(on_b.ptr(), on_a.ptr(), 4096, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_fill(on_b.ptr(), &v, 1, 4096, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(a->check_operand(on_b.ptr(), 16), ZE_RESULT_ERROR_DEVICE_LOST);
    ASSERT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
    ASSERT_EQ(copy_and_wait(q, on_a.ptr(), host.ptr(), 4096), ZE_RESULT_SUCCESS);
}

// A copy of a throttled device queued behind a wait, its source a peer's memory: the peer's
// free, and the peer's destruction, wait for it; the data arrives.
TEST(SimPeer, APeersFreeAndDestructionWaitForCopiesUsingItsMemory) {
    for (bool destroy : {false, true}) {
        in_child([destroy] {
            auto a = sim_device();
            auto b = sim_device();
            auto q = queue(a);
            auto gate = event(pool(a, 1));
            Memory on_a(a, MemoryKind::device, 4096);
            void* on_b = nullptr;
            ASSERT_EQ(b->allocate(MemoryKind::device, 4096, 0, 0, 0, &on_b), ZE_RESULT_SUCCESS);
            Memory host(a, MemoryKind::host, 4096);  // a's: nothing but `b` keeps b alive
            std::memset(host.ptr(), 0x42, 4096);
            ASSERT_EQ(copy_and_wait(queue(b), on_b, host.ptr(), 4096), ZE_RESULT_SUCCESS);
            const hal::EventRef waits[] = {gate};
            ASSERT_EQ(q->append_copy(on_a.ptr(), on_b, 4096, nullptr, waits), ZE_RESULT_SUCCESS);
            std::atomic<bool> released{false};
            std::thread releaser([&] {
                if (destroy)
                    b.reset();  // the last reference: the device goes
                else
                    EXPECT_EQ(b->free(on_b), ZE_RESULT_SUCCESS);
                released.store(true);
            });
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
            EXPECT_FALSE(released.load());  // it waits for the queued copy
            ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
            releaser.join();
            ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
            EXPECT_EQ(read_back(a, on_a.ptr(), 4096), std::vector<unsigned char>(4096, 0x42));
        });
    }
}

// A device of another backend: its memory is listed, but no copy path leads there.
class OtherBackendDevice final : public hal::Device {
public:
    explicit OtherBackendDevice(const hal::DeviceProperties& props) : props_(props) {}
    const hal::DeviceProperties& properties() const override { return props_; }
    std::string_view backend_name() const override { return "other"; }
    bool lost() const noexcept override { return false; }
    const std::vector<hal::MetricGroupInfo>& metric_groups() const override { return groups_; }
    hal::TraceSource* trace_source() override { return nullptr; }
    bool owns_event(const hal::Event&) const noexcept override { return false; }

    // Registers `size` bytes at `p` as this device's memory.
    void adopt(void* p, size_t size) {
        hal::Allocation a;
        a.info.kind = MemoryKind::device;
        a.info.base = p;
        a.info.size = size;
        ASSERT_EQ(memory_.insert(a), ZE_RESULT_SUCCESS);
    }

private:
    ze_result_t do_allocate(hal::MemoryKind, size_t, size_t, uint32_t, uint32_t, void**) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    ze_result_t do_free(void*) override { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
    ze_result_t do_pointer_info(const void* p, hal::PointerInfo* out) const override {
        hal::Allocation a;
        if (!memory_.find(p, &a)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        *out = a.info;
        return ZE_RESULT_SUCCESS;
    }
    ze_result_t do_check_operand(const void* p, size_t size) const override {
        return memory_.find_range(p, size, nullptr);
    }
    ze_result_t do_create_queue(uint32_t, uint32_t, std::shared_ptr<hal::Queue>*) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    ze_result_t do_create_event_pool(uint32_t, uint32_t, std::shared_ptr<hal::EventPool>*) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    ze_result_t do_create_module(hal::ModuleFormat, std::span<const uint8_t>, std::string_view,
                                 std::shared_ptr<hal::Module>*, std::string*) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    ze_result_t do_global_timestamps(uint64_t*, uint64_t*) override { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
    ze_result_t do_export_dma_buf(uint32_t, int*, size_t*) override { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
    ze_result_t do_import_dma_buf(int, size_t, void**) override { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

    const hal::DeviceProperties props_;
    const std::vector<hal::MetricGroupInfo> groups_;
    hal::PointerRegistry memory_;
    hal::DeviceMemoryListing listing_{memory_, this};
};

TEST(SimPeer, DeviceMemoryOfAnotherBackendIsRefused) {
    auto a = sim_device();
    auto other = std::make_shared<OtherBackendDevice>(a->properties());
    alignas(64) static unsigned char block[4096];
    other->adopt(block, sizeof block);
    EXPECT_FALSE(a->can_access_peer(*other));
    hal::PeerProperties p;
    ASSERT_EQ(a->peer_properties(*other, &p), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(p.access);
    Memory on_a(a, MemoryKind::device, 4096);
    auto q = queue(a);
    const unsigned char v = 1;
    EXPECT_EQ(a->check_operand(block, 16), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(on_a.ptr(), block, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(block, on_a.ptr(), 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_fill(block, &v, 1, 16, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->host_synchronize(0), ZE_RESULT_SUCCESS);
}

// Copies that touch a peer's memory go through the link's throttle (timings are not
// asserted): the data arrives.
TEST(SimPeer, CopiesThroughAThrottledLinkArrive) {
    sim::SimConfig config;
    config.link_bandwidth_bytes_per_s = 1u << 30;
    auto a = sim_device(config);
    auto b = sim_device(config);
    constexpr size_t kBytes = 1u << 20;
    Memory on_a(a, MemoryKind::device, kBytes);
    Memory on_b(b, MemoryKind::device, kBytes);
    Memory host(a, MemoryKind::host, kBytes);
    std::memset(host.ptr(), 0x33, kBytes);
    auto q = queue(a);
    ASSERT_EQ(copy_and_wait(q, on_a.ptr(), host.ptr(), kBytes), ZE_RESULT_SUCCESS);
    ASSERT_EQ(copy_and_wait(q, on_b.ptr(), on_a.ptr(), kBytes), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(b, on_b.ptr(), kBytes), std::vector<unsigned char>(kBytes, 0x33));
}

}  // namespace
}  // namespace zehal::test
