// Metric groups and their activation (contract §4).
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "metrics_test_util.hpp"

namespace zehal::metrics::test {
namespace {

TEST(MetricGroups, DescribeTheDevicesGroups) {
    auto d = make_device(quiet());
    std::vector<MetricGroupRef> groups;
    ASSERT_EQ(metric_groups(d, &groups), ZE_RESULT_SUCCESS);
    ASSERT_EQ(groups.size(), d->metric_groups().size());
    bool tracer = false, tracer_export = false;
    std::set<uint32_t> ids;
    size_t metric_count = 0;
    for (uint32_t i = 0; i < groups.size(); ++i) {
        const MetricGroup& g = *groups[i];
        EXPECT_EQ(g.index(), i);
        EXPECT_EQ(&g.info(), &d->metric_groups()[i]);
        EXPECT_NE(g.info().type_flags, 0u) << g.info().name;
        EXPECT_EQ(g.metrics().size(), g.info().metrics.size());
        tracer |= g.tracer_based();
        tracer_export |= g.tracer_based() && (g.info().type_flags & hal::kGroupExportDmaBuf);
        for (uint32_t k = 0; k < g.metrics().size(); ++k) {
            const Metric& m = g.metrics()[k];
            EXPECT_EQ(&m.group(), &g);
            EXPECT_EQ(m.index(), k);
            EXPECT_EQ(&m.info(), &g.info().metrics[k]);
            ids.insert(m.device_id());
        }
        metric_count += g.metrics().size();
    }
    EXPECT_TRUE(tracer);
    EXPECT_TRUE(tracer_export);
    EXPECT_EQ(ids.size(), metric_count);
    // The same objects on every call.
    std::vector<MetricGroupRef> again;
    ASSERT_EQ(metric_groups(d, &again), ZE_RESULT_SUCCESS);
    for (size_t i = 0; i < groups.size(); ++i) EXPECT_EQ(groups[i].get(), again[i].get());
}

TEST(MetricGroups, BadArguments) {
    std::vector<MetricGroupRef> groups;
    EXPECT_EQ(metric_groups(nullptr, &groups), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    auto d = make_device(quiet());
    EXPECT_EQ(metric_groups(d, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(activate(nullptr, groups), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST(MetricGroups, HandlesKeepTheirDeviceAlive) {
    std::weak_ptr<hal::Device> weak;
    MetricGroupRef g;
    MetricRef m;
    {
        auto d = make_device(quiet());
        weak = d;
        g = group_named(d, "EngineEvents");
        std::shared_ptr<DeviceMetrics> state;
        ASSERT_EQ(DeviceMetrics::of(d, &state), ZE_RESULT_SUCCESS);
        m = state->metric(g->metrics()[2]);
    }
    EXPECT_FALSE(weak.expired());
    EXPECT_EQ(g->info().name, "EngineEvents");
    g.reset();
    EXPECT_FALSE(weak.expired());
    EXPECT_EQ(m->info().name, "BytesMoved");
    EXPECT_EQ(m->group().info().name, "EngineEvents");
    m.reset();
    EXPECT_TRUE(weak.expired());
}

// Activation is checked by tracer creation: NOT_READY for a group not in the active set.
ze_result_t try_tracer(const hal::DeviceRef& d, const MetricGroupRef& g) {
    const MetricGroup* raw[] = {g.get()};
    std::shared_ptr<Tracer> t;
    const ze_result_t r = Tracer::create(d, raw, nullptr, nullptr, &t);
    if (t) {
        EXPECT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
    }
    return r;
}

TEST(MetricGroups, ActivatingASetReplacesThePreviousOne) {
    auto d = make_device(quiet());
    auto engine = group_named(d, "EngineEvents");
    auto async = group_named(d, "AsyncEvents");
    std::shared_ptr<DeviceMetrics> state;
    ASSERT_EQ(DeviceMetrics::of(d, &state), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(state->active(engine->index()));
    EXPECT_EQ(try_tracer(d, engine), ZE_RESULT_NOT_READY);

    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{engine}), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(state->active(engine->index()));
    EXPECT_EQ(try_tracer(d, engine), ZE_RESULT_SUCCESS);

    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{async}), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(state->active(engine->index()));
    EXPECT_TRUE(state->active(async->index()));
    EXPECT_EQ(try_tracer(d, engine), ZE_RESULT_NOT_READY);
    EXPECT_EQ(try_tracer(d, async), ZE_RESULT_SUCCESS);

    // An empty set deactivates everything.
    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{}), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(state->active(async->index()));
    EXPECT_FALSE(state->active(9999));
}

TEST(MetricGroups, BadActivationsLeaveTheSetAsItWas) {
    auto d = make_device(quiet());
    auto other = make_device(quiet());
    auto engine = group_named(d, "EngineEvents");
    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{engine}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(activate(d, std::vector<MetricGroupRef>{group_named(other, "AsyncEvents")}),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(activate(d, std::vector<MetricGroupRef>{engine, engine}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(activate(d, std::vector<MetricGroupRef>{engine, nullptr}), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(try_tracer(d, engine), ZE_RESULT_SUCCESS);
    // Each device has its own set.
    EXPECT_EQ(try_tracer(other, group_named(other, "EngineEvents")), ZE_RESULT_NOT_READY);
}

TEST(MetricGroups, ConcurrentActivationAndLookups) {
    auto d = make_device(quiet());
    std::vector<MetricGroupRef> groups;
    ASSERT_EQ(metric_groups(d, &groups), ZE_RESULT_SUCCESS);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            for (int k = 0; k < 300; ++k) {
                std::vector<MetricGroupRef> mine;
                EXPECT_EQ(metric_groups(d, &mine), ZE_RESULT_SUCCESS);
                std::vector<MetricGroupRef> set{mine[(i + k) % mine.size()]};
                EXPECT_EQ(activate(d, set), ZE_RESULT_SUCCESS);
                auto fresh = make_device(quiet());  // other devices come and go meanwhile
                EXPECT_EQ(metric_groups(fresh, &mine), ZE_RESULT_SUCCESS);
            }
        });
    }
    for (auto& t : threads) t.join();
    std::shared_ptr<DeviceMetrics> state;
    ASSERT_EQ(DeviceMetrics::of(d, &state), ZE_RESULT_SUCCESS);
    int active = 0;
    for (uint32_t i = 0; i < state->group_count(); ++i) active += state->active(i);
    EXPECT_EQ(active, 1);
}

}  // namespace
}  // namespace zehal::metrics::test
