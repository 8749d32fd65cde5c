// Two devices of the level_zero backend (docs/devices.md, docs/level_zero.md): CTest runs it
// with ZEHAL_SIM_DEVICES=2, so zehal's driver lists two sim devices (on a machine with two
// GPUs, the GPUs are the pair). Peer access as the driver reports it, copies between the
// devices' memory on the queues of either device in both directions, concurrent copies on
// both devices' queues, and memory of a device of another backend refused.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "support/backend_devices.hpp"
#include "support/peer_copies.hpp"
#include "hal/registry.hpp"
#include "hal/sim/sim_backend.hpp"

namespace zehal::test {
namespace {

using hal::MemoryKind;

// Two devices of the level_zero backend of one kind (the driver's GPUs where it lists two,
// else its sim devices), or a skip; a failure where the backend is required and missing.
#define ZEHAL_REQUIRE_TWO_LEVEL_ZERO(a, b)                                                              \
    do {                                                                                                \
        std::shared_ptr<hal::Backend> backend_;                                                         \
        if (hal::find_backend("level_zero", &backend_) != ZE_RESULT_SUCCESS) {                          \
            if (level_zero_required()) FAIL() << "level_zero backend unavailable";                      \
            GTEST_SKIP() << "level_zero backend unavailable";                                           \
        }                                                                                               \
        std::vector<hal::DeviceRef> gpus_, sims_;                                                       \
        for (const hal::DeviceRef& d : backend_->devices())                                             \
            (d->properties().name.find("zehal sim") != std::string::npos ? sims_ : gpus_).push_back(d); \
        const std::vector<hal::DeviceRef>& pair_ = gpus_.size() >= 2 ? gpus_ : sims_;                   \
        if (pair_.size() < 2) GTEST_SKIP() << "two level_zero devices of one kind needed";              \
        (a) = pair_[0];                                                                                 \
        (b) = pair_[1];                                                                                 \
    } while (0)

TEST(LevelZeroPeer, AccessIsReportedAsTheDriverReportsIt) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_LEVEL_ZERO(a, b);
    EXPECT_TRUE(a->can_access_peer(*a));
    EXPECT_EQ(a->can_access_peer(*b), b->can_access_peer(*a));
    for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
        hal::PeerProperties p;
        ASSERT_EQ(from->peer_properties(*to, &p), ZE_RESULT_SUCCESS);
        EXPECT_EQ(p.access, from->can_access_peer(*to));
        EXPECT_TRUE(from->copies_peer_memory(*to));
    }
    hal::PeerProperties self;
    ASSERT_EQ(a->peer_properties(*a, &self), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(self.access);
}

TEST(LevelZeroPeer, CopiesInBothDirectionsOnEitherDevice) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_LEVEL_ZERO(a, b);
    for (size_t n : {size_t{4} << 10, size_t{1} << 20}) {
        std::vector<uint8_t> data(n);
        for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 13 + n);
        for (const hal::DeviceRef& runner : {a, b}) {
            SCOPED_TRACE(testing::Message() << n << " bytes on " << runner->properties().name);
            Memory host(runner, MemoryKind::host, n), back(runner, MemoryKind::host, n);
            Memory on_a(a, MemoryKind::device, n), on_b(b, MemoryKind::device, n), again(a, MemoryKind::device, n);
            std::memcpy(host.ptr, data.data(), n);
            auto q = copy_queue(runner);
            ASSERT_EQ(copied(q, on_a.ptr, host.ptr, n), ZE_RESULT_SUCCESS);
            ASSERT_EQ(copied(q, on_b.ptr, on_a.ptr, n), ZE_RESULT_SUCCESS);
            ASSERT_EQ(copied(q, again.ptr, on_b.ptr, n), ZE_RESULT_SUCCESS);
            ASSERT_EQ(copied(q, back.ptr, again.ptr, n), ZE_RESULT_SUCCESS);
            EXPECT_EQ(std::memcmp(back.ptr, data.data(), n), 0);
        }
    }
}

// Four threads, each on a queue of its own: two of a, two of b, copying a's memory to b's
// and b's to a's at once, each round checked.
TEST(LevelZeroPeer, ConcurrentCopiesOnBothDevicesQueues) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_LEVEL_ZERO(a, b);
    EXPECT_EQ(failed_concurrent_peer_rounds(a, b, 1u << 20), 0);
}

// Device memory of this process's own sim device is no memory of the driver's devices: no
// path between them, refused both ways with nothing queued.
TEST(LevelZeroPeer, MemoryOfAnotherBackendsDeviceHasNoPath) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_LEVEL_ZERO(a, b);
    expect_no_path_to_sim_memory(a);
    hal::DeviceRef sim;
    ASSERT_EQ(sim::create_device(sim::SimConfig{}, &sim), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(a->can_access_peer(*sim));
}

}  // namespace
}  // namespace zehal::test
