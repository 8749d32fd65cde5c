// The metric table helpers every backend uses.
#include "hal/metric_info.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace zehal::hal {
namespace {

std::vector<MetricGroupInfo> table() {
    std::vector<MetricGroupInfo> g(3);
    g[0].sampling_types = kSamplingTracerBased;
    g[1].sampling_types = kSamplingEventBased | kSamplingTimeBased;
    g[2].sampling_types = kSamplingTracerBased | kSamplingEventBased;
    return g;
}

TEST(TracerGroupMask, TracerBasedGroupsGiveTheirBits) {
    uint32_t mask = 0;
    const uint32_t both[] = {0, 2};
    ASSERT_EQ(tracer_group_mask(both, table(), &mask), ZE_RESULT_SUCCESS);
    EXPECT_EQ(mask, 0b101u);
    const uint32_t twice[] = {2, 2};
    ASSERT_EQ(tracer_group_mask(twice, table(), &mask), ZE_RESULT_SUCCESS);
    EXPECT_EQ(mask, 0b100u);
}

TEST(TracerGroupMask, BadGroupsLeaveTheMaskAlone) {
    uint32_t mask = 7;
    EXPECT_EQ(tracer_group_mask({}, table(), &mask), ZE_RESULT_ERROR_INVALID_SIZE);
    const uint32_t not_tracer[] = {0, 1};
    EXPECT_EQ(tracer_group_mask(not_tracer, table(), &mask), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const uint32_t out_of_range[] = {3};
    EXPECT_EQ(tracer_group_mask(out_of_range, table(), &mask), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(mask, 7u);
}

TEST(MakeMetric, FillsEveryProperty) {
    const MetricInfo m = make_metric("n", "d", "c", kMetricExpExportDmaBuf, kUint32, "u");
    EXPECT_EQ(m.name, "n");
    EXPECT_EQ(m.description, "d");
    EXPECT_EQ(m.component, "c");
    EXPECT_EQ(m.tier, 1u);
    EXPECT_EQ(m.metric_type, 0x7ffffffdu);
    EXPECT_EQ(m.result_type, kUint32);
    EXPECT_EQ(m.units, "u");
}

TEST(ExportMemoryGroup, IsTracerBasedExportableAndCarriesTheExportMetric) {
    const MetricGroupInfo g = export_memory_group(5, 40);
    EXPECT_EQ(g.domain, 5u);
    EXPECT_EQ(g.first_metric_id, 40u);
    EXPECT_TRUE(g.sampling_types & kSamplingTracerBased);
    EXPECT_TRUE(g.type_flags & kGroupExportDmaBuf);
    ASSERT_EQ(g.metrics.size(), 2u);
    EXPECT_EQ(g.metrics[1].metric_type, kMetricExpExportDmaBuf);
}

}  // namespace
}  // namespace zehal::hal
