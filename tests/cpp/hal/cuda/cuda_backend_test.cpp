// The cuda backend in the registry, device properties and metric groups.
#include <gtest/gtest.h>

#include "support/backend_devices.hpp"
#include "hal/metric_info.hpp"

namespace zehal::test {
namespace {

TEST(CudaBackend, RegistryListsItWithAReasonWhenUnavailable) {
    bool found = false;
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name != "cuda") continue;
        found = true;
        if (b.available) {
            EXPECT_TRUE(b.reason.empty());
            ASSERT_NE(b.backend, nullptr);
            EXPECT_EQ(b.backend->name(), "cuda");
        } else {
            EXPECT_FALSE(b.reason.empty());
            EXPECT_EQ(b.backend, nullptr);
            std::shared_ptr<hal::Backend> none;
            EXPECT_EQ(hal::find_backend("cuda", &none), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
        }
    }
    EXPECT_TRUE(found);
}

TEST(CudaBackend, Properties) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    const hal::DeviceProperties& p = dev->properties();
    EXPECT_EQ(dev->backend_name(), "cuda");
    EXPECT_FALSE(p.name.empty());
    EXPECT_GT(p.memory_bytes, 0u);
    EXPECT_EQ(p.max_allocation_bytes, p.memory_bytes);
    EXPECT_EQ(p.timer_hz, 1'000'000'000u);
    EXPECT_EQ(p.kernel_timestamp_valid_bits, 64u);
    EXPECT_EQ(p.timestamp_valid_bits, 64u);
    EXPECT_EQ(p.compute_engines, 1u);
    EXPECT_GE(p.copy_engines, 1u);
    EXPECT_EQ(p.memory_ordinals, 1u);
    EXPECT_EQ(p.timestamp_flags, hal::kTimestampKernel | hal::kTimestampSynchronized);
    bool any_uuid_byte = false;
    for (uint8_t b : p.uuid) any_uuid_byte |= b != 0;
    EXPECT_TRUE(any_uuid_byte);
}

TEST(CudaBackend, MetricGroupsWhenTheTracerExists) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    if (!dev->properties().tracer) {
        EXPECT_TRUE(dev->metric_groups().empty());
        EXPECT_EQ(dev->trace_source(), nullptr);
        GTEST_SKIP() << "no CUPTI: the device has no tracer";
    }
    bool tracer = false, tracer_export = false;
    uint32_t next_id = 0;
    for (const hal::MetricGroupInfo& g : dev->metric_groups()) {
        const bool traced = g.sampling_types & hal::kSamplingTracerBased;
        tracer |= traced;
        tracer_export |= traced && (g.type_flags & hal::kGroupExportDmaBuf);
        EXPECT_EQ(g.first_metric_id, next_id);  // device-wide ids, in group order
        next_id += static_cast<uint32_t>(g.metrics.size());
        EXPECT_FALSE(g.metrics.empty());
    }
    EXPECT_TRUE(tracer);
    EXPECT_TRUE(tracer_export);
    EXPECT_NE(dev->trace_source(), nullptr);
}

}  // namespace
}  // namespace zehal::test
