// Metric groups, the tracer and the decoder: zehal::MetricGroup, Metric, Tracer, Decoder.
#include <gtest/gtest.h>

#include <zehal/zehal.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "expect_code.hpp"

namespace {

zehal::Device sim() { return zehal::Device::get("sim"); }

// The first tracer-based group of `d`.
std::vector<zehal::MetricGroup> one_tracer_group(const zehal::Device& d) {
    for (const zehal::MetricGroup& g : zehal::MetricGroup::of(d))
        if (g.tracer_based()) return {g};
    return {};
}

// Activates `groups` on `d` for the test's length, then deactivates every group.
class Activated {
public:
    Activated(const zehal::Device& d, const std::vector<zehal::MetricGroup>& groups) : d_(d) {
        zehal::MetricGroup::activate(d, groups);
    }
    ~Activated() { zehal::MetricGroup::activate(d_, {}); }

private:
    zehal::Device d_;
};

// `n` host -> device copies on `d`, each waited for.
void copies(const zehal::Device& d, int n) {
    zehal::Dma dma(d);
    zehal::Buffer a = zehal::Area::host().map(4096), b = zehal::Area::device(d).map(4096);
    for (int i = 0; i < n; ++i) dma.copy(b, a).wait();
}

// Everything the tracer holds, once disabled.
std::vector<uint8_t> drain(zehal::Tracer& tracer) {
    std::vector<uint8_t> raw;
    for (std::vector<uint8_t> chunk = tracer.read(); !chunk.empty(); chunk = tracer.read())
        raw.insert(raw.end(), chunk.begin(), chunk.end());
    return raw;
}

TEST(CppApiMetrics, GroupsAndMetrics) {
    const std::vector<zehal::MetricGroup> groups = zehal::MetricGroup::of(sim());
    ASSERT_FALSE(groups.empty());
    for (const zehal::MetricGroup& g : groups) {
        const zehal_metric_group_properties_t p = g.properties();
        EXPECT_GT(std::strlen(p.name), 0u);
        const std::vector<zehal::Metric> metrics = g.metrics();
        EXPECT_EQ(metrics.size(), p.metric_count) << p.name;
        for (const zehal::Metric& m : metrics) EXPECT_GT(std::strlen(m.properties().name), 0u);
    }
    EXPECT_EQ(one_tracer_group(sim()).size(), 1u);
}

TEST(CppApiMetrics, BadGroupsThrow) {
    EXPECT_ZE_ERROR(zehal::MetricGroup(nullptr).properties(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_ZE_ERROR(zehal::MetricGroup(nullptr).metrics(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_ZE_ERROR(zehal::Metric(nullptr).properties(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    const zehal::Device d = sim();
    const std::vector<zehal::MetricGroup> g = one_tracer_group(d);
    EXPECT_ZE_ERROR(zehal::Tracer(d, g), ZE_RESULT_NOT_READY);  // not activated
    EXPECT_ZE_ERROR(zehal::Tracer(d, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    const Activated active(d, g);
    std::vector<zehal::MetricGroup> not_tracer_based;
    for (const zehal::MetricGroup& group : zehal::MetricGroup::of(d))
        if (!group.tracer_based()) not_tracer_based.push_back(group);
    ASSERT_FALSE(not_tracer_based.empty());
    EXPECT_ZE_ERROR(zehal::Tracer(d, {not_tracer_based[0]}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::Tracer(d, {g[0], g[0]}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(CppApiMetrics, TraceCopiesAndDecodeThem) {
    const zehal::Device d = sim();
    const std::vector<zehal::MetricGroup> groups = one_tracer_group(d);
    ASSERT_EQ(groups.size(), 1u);
    const Activated active(d, groups);
    std::vector<uint8_t> raw;
    std::vector<zehal::Metric> group_metrics = groups[0].metrics();
    zehal::Tracer tracer(d, groups);
    zehal::Decoder decoder(tracer);
    EXPECT_ZE_ERROR(zehal::Tracer(d, groups), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);  // one per device
    EXPECT_TRUE(tracer.read().empty());                                               // not enabled yet
    tracer.enable();
    copies(d, 10);
    tracer.disable();
    raw = drain(tracer);
    EXPECT_EQ(tracer.dropped(), 0u);
    ASSERT_FALSE(raw.empty());
    EXPECT_EQ(raw.size() % ZEHAL_METRIC_RECORD_SIZE, 0u);

    const std::vector<zehal::Metric> decodable = decoder.decodable_metrics();
    EXPECT_EQ(decodable, group_metrics);
    const zehal::Decoded all = decoder.decode(raw);
    EXPECT_EQ(all.metrics, decodable);
    EXPECT_GE(all.entries.size(), 10u);
    ASSERT_EQ(all.entries_per_set.size(), 1u);  // no sub-devices
    EXPECT_EQ(all.entries_per_set[0], all.entries.size());
    for (const zehal_metric_entry_t& e : all.entries) EXPECT_LT(e.metric_index, decodable.size());

    const zehal::Decoded one = zehal::Decoder(tracer).decode(raw, {decodable.back()});
    ASSERT_EQ(one.metrics.size(), 1u);
    EXPECT_FALSE(one.entries.empty());
    EXPECT_LT(one.entries.size(), all.entries.size());
    for (const zehal_metric_entry_t& e : one.entries) EXPECT_EQ(e.metric_index, 0u);
}

TEST(CppApiMetrics, NotificationEventSignalsOnceDataIsThere) {
    const zehal::Device d = sim();
    const std::vector<zehal::MetricGroup> groups = one_tracer_group(d);
    const Activated active(d, groups);
    const zehal::EventPool pool(d, 1);
    const zehal::Event ready = pool.event(0);
    zehal::Tracer tracer(d, groups, 1, &ready);
    EXPECT_EQ(tracer.notify_every_n_bytes(), ZEHAL_METRIC_RECORD_SIZE);  // rounded up to a record
    EXPECT_FALSE(ready.query());
    tracer.enable();
    copies(d, 2);
    EXPECT_TRUE(ready.synchronize());
    EXPECT_FALSE(tracer.read().empty());
    tracer.disable();
}

TEST(CppApiMetrics, BadTracersThrow) {
    const zehal::Device d = sim();
    const std::vector<zehal::MetricGroup> groups = one_tracer_group(d);
    const Activated active(d, groups);
    zehal::Event moved_from = zehal::EventPool(d, 1).event(0);
    const zehal::Event event = std::move(moved_from);
    EXPECT_ZE_ERROR(zehal::Tracer(d, groups, 0, &moved_from), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    zehal::Tracer tracer(d, groups);
    EXPECT_EQ(tracer.available(), 0u);
    tracer.enable();
    tracer.enable();  // already enabled: nothing changes
    copies(d, 1);
    tracer.disable();
    tracer.disable();
    EXPECT_ZE_ERROR(tracer.read(0), ZE_RESULT_ERROR_INVALID_SIZE);
    const size_t available = tracer.available();
    EXPECT_GT(available, 0u);
    EXPECT_TRUE(tracer.read(ZEHAL_METRIC_RECORD_SIZE - 1).empty());  // whole records only
    EXPECT_EQ(tracer.read(ZEHAL_METRIC_RECORD_SIZE).size(), size_t{ZEHAL_METRIC_RECORD_SIZE});
    EXPECT_EQ(drain(tracer).size(), available - ZEHAL_METRIC_RECORD_SIZE);
    EXPECT_EQ(tracer.available(), 0u);
}

TEST(CppApiMetrics, BadDecodesThrow) {
    const zehal::Device d = sim();
    const std::vector<zehal::MetricGroup> groups = one_tracer_group(d);
    const Activated active(d, groups);
    zehal::Tracer tracer(d, groups);
    zehal::Decoder decoder(tracer);
    EXPECT_ZE_ERROR(decoder.decode({}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_ZE_ERROR(decoder.decode(std::vector<uint8_t>(ZEHAL_METRIC_RECORD_SIZE / 2, 0xFF)),
                    ZE_RESULT_ERROR_INVALID_ARGUMENT);
    tracer.enable();
    copies(d, 1);
    tracer.disable();
    const std::vector<uint8_t> raw = drain(tracer);
    const std::vector<zehal::Metric> twice{decoder.decodable_metrics()[0], decoder.decodable_metrics()[0]};
    EXPECT_ZE_ERROR(decoder.decode(raw, twice), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(decoder.decode(raw, {zehal::Metric(nullptr)}), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST(CppApiMetrics, DecoderOutlivesItsTracer) {
    const zehal::Device d = sim();
    const std::vector<zehal::MetricGroup> groups = one_tracer_group(d);
    const Activated active(d, groups);
    std::vector<uint8_t> raw;
    std::unique_ptr<zehal::Decoder> decoder;
    {
        zehal::Tracer tracer(d, groups);
        decoder = std::make_unique<zehal::Decoder>(tracer);
        tracer.enable();
        copies(d, 3);
        tracer.disable();
        raw = drain(tracer);
    }
    EXPECT_GE(decoder->decode(raw).entries.size(), 3u);
    zehal::Tracer again(d, groups);  // the first one is gone
}

}  // namespace
