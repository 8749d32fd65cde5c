// The CUDA device's sampled counters (GpuActivity, CUPTI's PM sampling): the group, windows
// of device time around real work and around idle time, restarts, and bad input.
#include <gtest/gtest.h>

#include <bit>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "support/backend_devices.hpp"
#include "hal/metric_info.hpp"

namespace zehal::test {
namespace {

// Index of GpuActivity in the device's groups, or ~0u.
uint32_t activity_group(const hal::DeviceRef& dev) {
    const auto& groups = dev->metric_groups();
    for (uint32_t i = 0; i < groups.size(); ++i)
        if (groups[i].name == "GpuActivity") return i;
    return ~0u;
}

// Index of metric `name` of group `g`.
size_t metric(const hal::MetricGroupInfo& g, const char* name) {
    for (size_t i = 0; i < g.metrics.size(); ++i)
        if (g.metrics[i].name == name) return i;
    ADD_FAILURE() << "no metric " << name;
    return 0;
}

#define ZEHAL_REQUIRE_COUNTERS(dev, group)                                                    \
    ZEHAL_REQUIRE_CUDA(dev);                                                                  \
    const uint32_t group = activity_group(dev);                                               \
    if (group == ~0u) GTEST_SKIP() << "no GpuActivity group: " << (dev)->properties().limits; \
    ASSERT_NE((dev)->counter_source(), nullptr)

// Fills `bytes` of device memory `times` times on the compute engine and waits.
void fill(const hal::DeviceRef& dev, size_t bytes, int times) {
    void* p = nullptr;
    ASSERT_EQ(dev->allocate(hal::MemoryKind::device, bytes, 64, 0, 0, &p), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    const uint32_t pattern = 0x5A5A5A5A;
    for (int i = 0; i < times; ++i)
        ASSERT_EQ(q->append_fill(p, &pattern, sizeof(pattern), bytes, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(UINT64_MAX), ZE_RESULT_SUCCESS);
    ASSERT_EQ(dev->free(p), ZE_RESULT_SUCCESS);
}

// Starts reading `source`, waiting while another process samples the device (each test runs
// in a process of its own, several at once): SUCCESS, or the answer that is not that.
ze_result_t start_reading(hal::CounterSource* source) {
    ze_result_t r = source->use(true);
    for (int tries = 0; r == ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE && tries < 600; ++tries) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        r = source->use(true);
    }
    return r;
}

TEST(CudaCounters, GroupIsEventAndTimeBased) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_COUNTERS(dev, group);
    const hal::MetricGroupInfo& g = dev->metric_groups()[group];
    EXPECT_EQ(g.sampling_types, hal::kSamplingEventBased | hal::kSamplingTimeBased);
    EXPECT_EQ(g.metrics[metric(g, "GpuTime")].metric_type, hal::kMetricDuration);
    EXPECT_EQ(g.metrics[metric(g, "GpuBusy")].result_type, hal::kFp32);
    EXPECT_EQ(g.metrics[metric(g, "DramBytesWritten")].units, "bytes");
    EXPECT_TRUE(hal::has_stream_marker(g));
    // Metric ids follow the tracer's groups without a gap or an overlap.
    const hal::MetricGroupInfo& before = dev->metric_groups()[group - 1];
    EXPECT_EQ(g.first_metric_id, before.first_metric_id + before.metrics.size());
}

TEST(CudaCounters, WindowsSeeTheWorkInThem) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_COUNTERS(dev, group);
    const hal::MetricGroupInfo& g = dev->metric_groups()[group];
    hal::CounterSource* source = dev->counter_source();
    const ze_result_t started = start_reading(source);
    if (started == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "this system does not let CUPTI sample";
    ASSERT_EQ(started, ZE_RESULT_SUCCESS);
    // The first interval of a run is not counted: begin after it.
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    constexpr size_t kBytes = 256u << 20;
    const uint64_t t0 = source->now_ticks();
    fill(dev, kBytes, 64);
    const uint64_t t1 = source->now_ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t t2 = source->now_ticks();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const uint64_t t3 = source->now_ticks();
    std::vector<uint64_t> busy(hal::counted_metrics(g)), idle(hal::counted_metrics(g));
    ASSERT_EQ(source->window(group, t0, t1, busy), ZE_RESULT_SUCCESS);
    ASSERT_EQ(source->window(group, t2, t3, idle), ZE_RESULT_SUCCESS);
    EXPECT_EQ(busy[metric(g, "GpuTime")], t1 - t0);
    // 16 GiB written in a few sampling intervals: at least half of it is counted in the
    // window, though the samples at its edges are counted in proportion to their overlap.
    EXPECT_GE(busy[metric(g, "DramBytesWritten")], 32 * kBytes);
    EXPECT_GT(busy[metric(g, "GpcFrequency")], 100'000'000u);
    // Idle time writes little.
    EXPECT_LT(idle[metric(g, "DramBytesWritten")], kBytes / 16);
    EXPECT_GT(idle[metric(g, "GpcFrequency")], 0u);
    ASSERT_EQ(source->use(false), ZE_RESULT_SUCCESS);
    // Samples taken stay answerable after sampling stopped.
    std::vector<uint64_t> again(hal::counted_metrics(g));
    ASSERT_EQ(source->window(group, t0, t1, again), ZE_RESULT_SUCCESS);
    EXPECT_EQ(again, busy);
}

TEST(CudaCounters, RestartsAndNestedUses) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_COUNTERS(dev, group);
    const hal::MetricGroupInfo& g = dev->metric_groups()[group];
    hal::CounterSource* source = dev->counter_source();
    for (int round = 0; round < 3; ++round) {
        const ze_result_t started = start_reading(source);
        if (started == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "this system does not let CUPTI sample";
        ASSERT_EQ(started, ZE_RESULT_SUCCESS);
        ASSERT_EQ(source->use(true), ZE_RESULT_SUCCESS);  // a second reader shares the run
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        const uint64_t t0 = source->now_ticks();
        fill(dev, 256u << 20, 32);
        const uint64_t t1 = source->now_ticks();
        ASSERT_EQ(source->use(false), ZE_RESULT_SUCCESS);
        std::vector<uint64_t> v(hal::counted_metrics(g));
        ASSERT_EQ(source->window(group, t0, t1, v), ZE_RESULT_SUCCESS);
        EXPECT_GE(v[metric(g, "DramBytesWritten")], 1u << 30) << "round " << round;
        ASSERT_EQ(source->use(false), ZE_RESULT_SUCCESS);
    }
}

TEST(CudaCounters, BadInput) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_COUNTERS(dev, group);
    const hal::MetricGroupInfo& g = dev->metric_groups()[group];
    hal::CounterSource* source = dev->counter_source();
    std::vector<uint64_t> v(hal::counted_metrics(g)), short_values(hal::counted_metrics(g) - 1),
        long_values(g.metrics.size());
    EXPECT_EQ(source->window(group + 1, 0, 1, v), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(source->window(0, 0, 1, v), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(source->window(group, 0, 1, short_values), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(source->window(group, 0, 1, long_values),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);  // StreamMarker is not the source's
    // A window nothing was sampled in: zeros but its length.
    ASSERT_EQ(source->window(group, 10, 20, v), ZE_RESULT_SUCCESS);
    EXPECT_EQ(v[metric(g, "GpuTime")], 10u);
    EXPECT_EQ(v[metric(g, "DramBytesWritten")], 0u);
}

}  // namespace
}  // namespace zehal::test
