// The lost-device contract (cpp/hal/device.hpp, contract §1, §11): where the backend injects
// faults, a lost device answers DEVICE_LOST to every later call and releases what waited on
// it; elsewhere lose() is UNSUPPORTED_FEATURE and the device stays usable.
#include "contract_fixture.hpp"

namespace zehal::test::contract {
namespace {

TEST_P(LostDeviceContract, LoseIsFaultInjectionOnly) {
    if (GetParam().can_lose) GTEST_SKIP() << "the backend injects faults";
    EXPECT_EQ(device_->lose(), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    Allocation m(device_, hal::MemoryKind::device, 4096);
    EXPECT_NE(m.ptr(), nullptr);
}

TEST_P(LostDeviceContract, ALostDeviceAnswersDeviceLostAndReleasesWaiters) {
    if (!GetParam().can_lose) GTEST_SKIP() << "no fault injection in this backend";
    auto q = queue();
    EventSet ev(device_, 2);
    Allocation a(device_, hal::MemoryKind::host, 4096), b(device_, hal::MemoryKind::device, 4096);
    const hal::EventRef waits[] = {ev.events[0]};
    // A command that can never start: only the loss releases its waiter.
    ASSERT_EQ(q->append_copy(b.ptr(), a.ptr(), 4096, ev.events[1], waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(device_->lose(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[1]->host_synchronize(kHangGuardNs), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_ERROR_DEVICE_LOST);

    void* p = nullptr;
    const uint8_t pattern = 1;
    std::shared_ptr<hal::Queue> q2;
    std::shared_ptr<hal::EventPool> pool;
    uint64_t host = 0, ticks = 0;
    EXPECT_EQ(device_->allocate(hal::MemoryKind::device, 64, 0, 0, 0, &p), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->create_queue(hal::kComputeOrdinal, 0, &q2), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->create_event_pool(1, 0, &pool), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(device_->global_timestamps(&host, &ticks), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_copy(b.ptr(), a.ptr(), 64, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_fill(b.ptr(), &pattern, 1, 64, nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->append_barrier(nullptr, {}), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(q->cancel(ev.events[1]), ZE_RESULT_ERROR_DEVICE_LOST);
    // Properties and names still answer.
    EXPECT_FALSE(device_->properties().name.empty());
    EXPECT_FALSE(device_->backend_name().empty());
}

}  // namespace
}  // namespace zehal::test::contract
