// Notification events of streamers and tracers: an event of the device's own pool, or of
// another device's pool made for the device (metrics::Notification), host-visible.
#include <gtest/gtest.h>

#include "metrics/notification.hpp"
#include "metrics/streamer.hpp"
#include "metrics_test_util.hpp"

namespace zehal::metrics::test {
namespace {

// Event 0 of a fresh pool of `d` with `flags`.
hal::EventRef event_of(const hal::DeviceRef& d, uint32_t flags) {
    std::shared_ptr<hal::EventPool> pool;
    EXPECT_EQ(d->create_event_pool(1, flags, &pool), ZE_RESULT_SUCCESS);
    hal::EventRef e;
    EXPECT_EQ(pool->event(0, &e), ZE_RESULT_SUCCESS);
    return e;
}

TEST(Notification, OwnEventsAndThoseOfPoolsMadeForTheDevice) {
    auto d = make_device(quiet());
    auto other = make_device(quiet());
    const hal::EventRef own = event_of(d, hal::kPoolHostVisible);
    const hal::EventRef foreign = event_of(other, hal::kPoolHostVisible);
    ASSERT_TRUE(d->signals_event(*foreign));  // every sim device signals the others' events
    EXPECT_EQ(check_notification(*d, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(check_notification(*d, own), ZE_RESULT_SUCCESS);
    EXPECT_EQ(check_notification(*d, Notification(own, true)), ZE_RESULT_SUCCESS);
    // Another device's event only from a pool made for this device too.
    EXPECT_EQ(check_notification(*d, foreign), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(check_notification(*d, Notification(foreign, false)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(check_notification(*d, Notification(foreign, true)), ZE_RESULT_SUCCESS);
    // Never one the host cannot see.
    EXPECT_EQ(check_notification(*d, event_of(d, 0)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(check_notification(*d, Notification(event_of(other, 0), true)), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(Notification, AnotherDevicesEventMadeForTheDeviceIsSignalled) {
    auto d = make_device(quiet());
    auto other = make_device(quiet());
    const hal::EventRef foreign = event_of(other, hal::kPoolHostVisible);
    // A tracer: enabling it queues records, which fire the event at one record.
    std::vector<MetricGroupRef> groups{group_named(d, "EngineEvents")};
    ASSERT_EQ(activate(d, groups), ZE_RESULT_SUCCESS);
    const MetricGroup* raw[] = {groups[0].get()};
    uint32_t notify = 1;
    std::shared_ptr<Tracer> t;
    EXPECT_EQ(Tracer::create(d, raw, &notify, foreign, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(Tracer::create(d, raw, &notify, Notification(foreign, true), &t), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    EXPECT_EQ(foreign->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
    // A streamer: one report fires it.
    MetricGroupRef util = group_named(d, "EngineUtilization");
    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{util}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(foreign->host_reset(), ZE_RESULT_SUCCESS);
    uint32_t period = Streamer::kMinPeriodNs, reports = 1;
    std::shared_ptr<Streamer> s;
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &reports, foreign, &s), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(Streamer::open(d, util.get(), &period, &reports, Notification(foreign, true), &s), ZE_RESULT_SUCCESS);
    EXPECT_EQ(foreign->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(s->close(), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zehal::metrics::test
