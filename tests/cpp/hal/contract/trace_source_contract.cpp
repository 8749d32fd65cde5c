// The trace source contract (contract §5, cpp/hal/trace_source.hpp): a device has a trace
// source exactly when it says it has a tracer; start checks its groups; every command on
// the engine-events group becomes records of device-wide metric ids, a start before its
// end, with the bytes it moved.
#include <unistd.h>

#include <map>

#include "common/clock.hpp"
#include "contract_fixture.hpp"
#include "hal/metric_info.hpp"
#include "hal/timestamps.hpp"
#include "hal/trace_record.hpp"

namespace zehal::test::contract {
namespace {

// Index in metric_groups() of the first tracer-based group with `type_flag`; ~0u when none.
uint32_t tracer_group(const hal::DeviceRef& device, uint32_t type_flag) {
    const auto& groups = device->metric_groups();
    for (uint32_t i = 0; i < groups.size(); ++i)
        if ((groups[i].sampling_types & hal::kSamplingTracerBased) && (groups[i].type_flags & type_flag)) return i;
    return ~0u;
}

// Drains `source` until at least `count` records came or the hang guard passed.
std::vector<hal::TraceRecord> drain_at_least(hal::TraceSource& source, size_t count, uint64_t* lost) {
    std::vector<hal::TraceRecord> all;
    const uint64_t deadline = host_now_ns() + kHangGuardNs;
    hal::TraceRecord chunk[256];
    while (all.size() < count && host_now_ns() < deadline) {
        const size_t n = source.drain(chunk, sizeof(chunk), lost);
        all.insert(all.end(), chunk, chunk + n / sizeof(hal::TraceRecord));
        if (n == 0) usleep(1000);
    }
    return all;
}

#define ZEHAL_REQUIRE_TRACER() \
    if (!device_->properties().tracer) GTEST_SKIP() << "no tracer: " << device_->properties().limits

TEST_P(TraceSourceContract, ADeviceHasASourceExactlyWhenItHasATracer) {
    EXPECT_EQ(device_->trace_source() != nullptr, device_->properties().tracer);
}

TEST_P(TraceSourceContract, StartChecksItsGroups) {
    ZEHAL_REQUIRE_TRACER();
    hal::TraceSource* source = device_->trace_source();
    ASSERT_NE(source, nullptr);
    EXPECT_EQ(source->start({}), ZE_RESULT_ERROR_INVALID_SIZE);
    const uint32_t past_the_end[] = {static_cast<uint32_t>(device_->metric_groups().size())};
    EXPECT_EQ(source->start(past_the_end), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const auto& groups = device_->metric_groups();
    for (uint32_t i = 0; i < groups.size(); ++i) {
        if (groups[i].sampling_types & hal::kSamplingTracerBased) continue;
        const uint32_t not_tracer_based[] = {i};
        EXPECT_EQ(source->start(not_tracer_based), ZE_RESULT_ERROR_INVALID_ARGUMENT) << groups[i].name;
    }
    EXPECT_GT(source->capacity(), 0u);
    EXPECT_EQ(source->stop(), ZE_RESULT_SUCCESS);
}

TEST_P(TraceSourceContract, CommandsBecomeEngineRecords) {
    ZEHAL_REQUIRE_TRACER();
    hal::TraceSource* source = device_->trace_source();
    ASSERT_NE(source, nullptr);
    const uint32_t engine = tracer_group(device_, hal::kGroupOther);
    ASSERT_NE(engine, ~0u) << "a tracer offers the engine-events group";
    const hal::MetricGroupInfo& g = device_->metric_groups()[engine];
    auto q = queue();
    constexpr size_t kCopyBytes = 1 << 20, kFillBytes = 4096;
    Allocation a(device_, hal::MemoryKind::host, kCopyBytes), b(device_, hal::MemoryKind::device, kCopyBytes);

    const uint32_t groups[] = {engine};
    ASSERT_EQ(source->start(groups), ZE_RESULT_SUCCESS);
    uint64_t host = 0, before = 0, after = 0;
    ASSERT_EQ(device_->global_timestamps(&host, &before), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(b.ptr(), a.ptr(), kCopyBytes, nullptr, {}), ZE_RESULT_SUCCESS);
    const uint32_t pattern = 0x01020304;
    ASSERT_EQ(q->append_fill(b.ptr(), &pattern, 4, kFillBytes, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    ASSERT_EQ(device_->global_timestamps(&host, &after), ZE_RESULT_SUCCESS);
    uint64_t lost = 0;
    const std::vector<hal::TraceRecord> records = drain_at_least(*source, 2 * g.metrics.size(), &lost);
    EXPECT_EQ(source->stop(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(lost, 0u);
    ASSERT_GE(records.size(), 2 * g.metrics.size());
    EXPECT_GE(source->produced(), records.size());

    // Ticks wrap at the valid bits: compare distances from `before`.
    const uint32_t bits = device_->properties().timestamp_valid_bits;
    const uint64_t window = hal::elapsed_ticks(before, after, bits);
    std::map<uint64_t, uint64_t> start_of;  // command id -> start ticks
    bool copy_bytes = false, fill_bytes = false;
    for (const hal::TraceRecord& r : records) {
        EXPECT_EQ(r.kind, hal::kRecordSample);
        EXPECT_EQ(r.size, sizeof(hal::TraceRecord));
        if (device_->properties().subdevices == 0) {
            EXPECT_EQ(r.subdevice, hal::kRootDevice);
        }
        ASSERT_GE(r.metric, g.first_metric_id);
        ASSERT_LT(r.metric, g.first_metric_id + g.metrics.size());
        const std::string& name = g.metrics[r.metric - g.first_metric_id].name;
        EXPECT_LE(hal::elapsed_ticks(before, r.ticks, bits), window) << name;
        if (name == "CommandStart") start_of[r.value] = r.ticks;
        if (name == "CommandEnd") {
            ASSERT_TRUE(start_of.count(r.value)) << "an end without its start";
            EXPECT_LE(hal::elapsed_ticks(before, start_of[r.value], bits), hal::elapsed_ticks(before, r.ticks, bits));
        }
        if (name == "BytesMoved") {
            copy_bytes |= r.value == kCopyBytes;
            fill_bytes |= r.value == kFillBytes;
        }
    }
    EXPECT_TRUE(copy_bytes);
    EXPECT_TRUE(fill_bytes);
}

}  // namespace
}  // namespace zehal::test::contract
