// The event contract (cpp/hal/event.hpp, contract §1, §3): pools and their bad input,
// signal, query, reset and host waits, and events that outlive their pool's handle.
#include "contract_fixture.hpp"

namespace zehal::test::contract {
namespace {

TEST_P(EventContract, PoolBadInputIsRefused) {
    std::shared_ptr<hal::EventPool> pool;
    EXPECT_EQ(device_->create_event_pool(0, 0, &pool), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(device_->create_event_pool(1, 1u << 4, &pool), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(device_->create_event_pool(1, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(pool, nullptr);
    ASSERT_EQ(device_->create_event_pool(4, hal::kPoolHostVisible, &pool), ZE_RESULT_SUCCESS);
    EXPECT_EQ(pool->count(), 4u);
    EXPECT_EQ(pool->flags(), hal::kPoolHostVisible);
    hal::EventRef e;
    EXPECT_EQ(pool->event(4, &e), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(pool->event(0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(pool->event(3, &e), ZE_RESULT_SUCCESS);
    hal::EventRef again;
    ASSERT_EQ(pool->event(3, &again), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e.get(), again.get());
    EXPECT_EQ(&e->pool(), pool.get());
}

TEST_P(EventContract, SignalQueryResetAndHostSignal) {
    auto q = queue();
    EventSet ev(device_, 1);
    Allocation a(device_, hal::MemoryKind::host, 4096), b(device_, hal::MemoryKind::device, 4096);
    const hal::EventRef e = ev.events[0];
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_synchronize(0), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_synchronize(1'000'000), ZE_RESULT_NOT_READY);  // nothing will signal it
    ASSERT_EQ(q->append_copy(b.ptr(), a.ptr(), 4096, e, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->query(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(0), ZE_RESULT_SUCCESS);
}

TEST_P(EventContract, ABarrierSignalsAfterAHostSignalledWait) {
    auto q = queue();
    EventSet ev(device_, 2);
    const hal::EventRef waits[] = {ev.events[0]};
    ASSERT_EQ(q->append_barrier(ev.events[1], waits), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[1]->query(), ZE_RESULT_NOT_READY);
    ASSERT_EQ(ev.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[1]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

TEST_P(EventContract, AnEventOutlivesItsPoolHandle) {
    hal::EventRef e;
    {
        EventSet ev(device_, 2);
        e = ev.events[1];
    }
    auto q = queue();
    ASSERT_EQ(q->append_barrier(e, {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e->pool().count(), 2u);
    EXPECT_TRUE(device_->owns_event(*e));
}

TEST_P(EventContract, TimestampQueriesNeedATimestampPool) {
    EventSet ev(device_, 1);
    ASSERT_EQ(ev.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    uint32_t count = 0;
    EXPECT_EQ(ev.events[0]->query_kernel_timestamps(&count, nullptr), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(ev.events[0]->query_synchronized_timestamps(&count, nullptr), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    if (!(device_->properties().timestamp_flags & hal::kTimestampKernel)) return;
    // Synchronized timestamps need KERNEL_MAPPED_TIMESTAMP; KERNEL_TIMESTAMP is not enough.
    EventSet kernel(device_, 1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    auto q = queue();
    ASSERT_EQ(q->append_barrier(kernel.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(kernel.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(kernel.events[0]->query_synchronized_timestamps(&count, nullptr), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    count = 0;
    EXPECT_EQ(kernel.events[0]->query_kernel_timestamps(&count, nullptr), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zehal::test::contract
