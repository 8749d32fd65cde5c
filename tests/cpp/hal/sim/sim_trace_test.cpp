// The sim device's hardware trace side on its own: groups, the bounded buffer, drops,
// and the asynchronous source.
#include <gtest/gtest.h>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "hal/sim/sim_trace.hpp"
#include "hal/trace_record.hpp"

namespace zehal::sim {
namespace {

using Record = hal::TraceRecord;

uint32_t group_index(const char* name) {
    const auto& g = SimTrace::groups();
    for (uint32_t i = 0; i < g.size(); ++i)
        if (g[i].name == name) return i;
    ADD_FAILURE() << name;
    return 0;
}

CommandTrace command(uint64_t bytes, uint32_t subdevice = hal::kRootDevice) {
    return CommandTrace{1, 0, 7, 0, bytes, 100, 200, 3, subdevice};
}

std::vector<Record> drain_all(SimTrace& t, uint64_t* lost, size_t batch = 1 << 16) {
    std::vector<Record> out, buf(batch / sizeof(Record) + 1);
    for (;;) {
        const size_t n = t.drain(buf.data(), batch, lost);
        if (n == 0) break;
        EXPECT_EQ(n % sizeof(Record), 0u);
        out.insert(out.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(n / sizeof(Record)));
    }
    return out;
}

TEST(SimTraceGroups, EveryGroupHasTypeFlagsAndUniqueMetricIds) {
    const auto& groups = SimTrace::groups();
    ASSERT_GE(groups.size(), 3u);
    std::set<uint32_t> ids;
    size_t metric_count = 0;
    for (const auto& g : groups) {
        EXPECT_NE(g.type_flags, 0u) << g.name;
        EXPECT_NE(g.sampling_types, 0u) << g.name;
        EXPECT_FALSE(g.metrics.empty()) << g.name;
        for (uint32_t i = 0; i < g.metrics.size(); ++i) {
            ids.insert(g.first_metric_id + i);
            EXPECT_LE(g.metrics[i].result_type, static_cast<uint32_t>(hal::kBool8));
            EXPECT_FALSE(g.metrics[i].name.empty());
        }
        metric_count += g.metrics.size();
    }
    EXPECT_EQ(ids.size(), metric_count);
}

TEST(SimTraceGroups, TracerEngineAsyncAndExportGroups) {
    const auto& groups = SimTrace::groups();
    const auto& engine = groups[group_index("EngineEvents")];
    EXPECT_TRUE(engine.sampling_types & hal::kSamplingTracerBased);
    EXPECT_EQ(engine.metrics.size(), 8u);
    EXPECT_EQ(engine.metrics[0].metric_type, hal::kMetricEventExpStart);
    EXPECT_EQ(engine.metrics[1].metric_type, hal::kMetricEventExpEnd);
    EXPECT_TRUE(groups[group_index("AsyncEvents")].sampling_types & hal::kSamplingTracerBased);

    const uint32_t e = SimTrace::export_group();
    ASSERT_LT(e, groups.size());
    EXPECT_TRUE(groups[e].sampling_types & hal::kSamplingTracerBased);
    EXPECT_TRUE(groups[e].type_flags & hal::kGroupExportDmaBuf);
    bool has_export_metric = false;
    for (const auto& m : groups[e].metrics) has_export_metric |= m.metric_type == hal::kMetricExpExportDmaBuf;
    EXPECT_TRUE(has_export_metric);
    for (uint32_t i = 0; i < groups.size(); ++i) {
        if (i != e) {
            EXPECT_FALSE(groups[i].type_flags & hal::kGroupExportDmaBuf) << groups[i].name;
        }
    }
}

class SimTraceTest : public ::testing::Test {
protected:
    SimTraceTest() : clock_(19'200'000, 0) {}
    std::unique_ptr<SimTrace> make(size_t buffer_bytes, uint64_t rate = 0, uint32_t bits = 64) {
        SimConfig c;
        c.trace_buffer_bytes = buffer_bytes;
        c.async_records_per_s = rate;
        c.timestamp_valid_bits = bits;
        return SimTrace::create(c, clock_);
    }
    SimClock clock_;
};

TEST_F(SimTraceTest, StartChecksItsGroups) {
    auto t = make(1 << 12);
    EXPECT_EQ(t->start({}), ZE_RESULT_ERROR_INVALID_SIZE);
    const uint32_t bad[] = {99};
    EXPECT_EQ(t->start(bad), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const uint32_t not_tracer[] = {group_index("EngineUtilization")};
    EXPECT_EQ(t->start(not_tracer), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(t->capacity(), size_t{1 << 12});
}

TEST_F(SimTraceTest, CommandsWriteRecordsOnlyWhileTheirGroupIsStarted) {
    auto t = make(1 << 12, 0, 8);
    t->on_command(command(64));
    uint64_t lost = 0;
    EXPECT_TRUE(drain_all(*t, &lost).empty());
    EXPECT_EQ(t->produced(), 0u);

    const uint32_t engine[] = {group_index("EngineEvents")};
    ASSERT_EQ(t->start(engine), ZE_RESULT_SUCCESS);
    CommandTrace c = command(4096, 1);
    c.start_ticks = 0x1FF;  // masked to 8 valid bits
    c.end_ticks = 0x305;
    t->on_command(c);
    t->on_export_write(SimTrace::export_group(), 0xAB, 5, hal::kRootDevice);  // export group not started
    auto recs = drain_all(*t, &lost);
    ASSERT_EQ(recs.size(), 8u);
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(t->produced(), 8u);
    const uint32_t first = SimTrace::groups()[engine[0]].first_metric_id;
    for (uint32_t i = 0; i < 8; ++i) {
        EXPECT_EQ(recs[i].kind, hal::kRecordSample);
        EXPECT_EQ(recs[i].size, sizeof(Record));
        EXPECT_EQ(recs[i].metric, first + i);
        EXPECT_EQ(recs[i].subdevice, 1u);
    }
    EXPECT_EQ(recs[0].ticks, 0xFFu);
    EXPECT_EQ(recs[1].ticks, 0x05u);
    EXPECT_EQ(recs[0].value, recs[1].value);  // start and end carry the command id
    EXPECT_EQ(recs[2].value, 4096u);          // bytes
    EXPECT_EQ(recs[3].value, 1u);             // ordinal
    EXPECT_EQ(recs[5].value, 7u);             // queue id
    EXPECT_EQ(recs[7].value, 3u);             // queue depth

    ASSERT_EQ(t->stop(), ZE_RESULT_SUCCESS);
    t->on_command(command(1));
    EXPECT_TRUE(drain_all(*t, &lost).empty());
}

TEST_F(SimTraceTest, ExportWritesAreKindSixWithTheFirstWord) {
    auto t = make(1 << 12);
    const uint32_t exp[] = {SimTrace::export_group()};
    ASSERT_EQ(t->start(exp), ZE_RESULT_SUCCESS);
    t->on_command(command(1));  // engine group not started
    t->on_export_write(SimTrace::export_group(), 0xABABABAB, 42, hal::kRootDevice);
    t->on_export_write(group_index("EngineEvents"), 1, 42, hal::kRootDevice);  // not an export group
    uint64_t lost = 0;
    auto recs = drain_all(*t, &lost);
    ASSERT_EQ(recs.size(), 1u);
    EXPECT_EQ(recs[0].kind, hal::kRecordExportWrite);
    EXPECT_EQ(recs[0].value, 0xABABABABu);
    EXPECT_EQ(recs[0].ticks, 42u);
    EXPECT_EQ(recs[0].subdevice, hal::kRootDevice);
}

TEST_F(SimTraceTest, FullBufferDropsNewRecordsAndReportsTheGapInPlace) {
    auto t = make(16 * sizeof(Record));  // two commands
    const uint32_t engine[] = {group_index("EngineEvents")};
    ASSERT_EQ(t->start(engine), ZE_RESULT_SUCCESS);
    t->on_command(command(1));
    t->on_command(command(2));
    t->on_command(command(3));  // dropped whole
    EXPECT_EQ(t->produced(), 24u);

    Record buf[8];
    uint64_t lost = 0;
    ASSERT_EQ(t->drain(buf, sizeof buf, &lost), sizeof buf);
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(buf[2].value, 1u);
    t->on_command(command(4));  // fits again, after the gap
    ASSERT_EQ(t->drain(buf, sizeof buf, &lost), sizeof buf);
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(buf[2].value, 2u);
    ASSERT_EQ(t->drain(buf, sizeof buf, &lost), sizeof buf);
    EXPECT_EQ(lost, 8u);  // the third command, reported before the fourth
    EXPECT_EQ(buf[2].value, 4u);
    EXPECT_EQ(t->drain(buf, sizeof buf, &lost), 0u);
    EXPECT_EQ(lost, 8u);
}

TEST_F(SimTraceTest, LossesAfterTheLastRecordAreReportedOnceTheBufferIsEmpty) {
    auto t = make(8 * sizeof(Record));
    const uint32_t engine[] = {group_index("EngineEvents")};
    ASSERT_EQ(t->start(engine), ZE_RESULT_SUCCESS);
    t->on_command(command(1));
    t->on_command(command(2));
    uint64_t lost = 0;
    auto recs = drain_all(*t, &lost);
    EXPECT_EQ(recs.size(), 8u);
    EXPECT_EQ(lost, 8u);
    EXPECT_EQ(t->produced(), recs.size() + lost);
}

TEST_F(SimTraceTest, DrainIntoLessThanARecordMovesNothing) {
    auto t = make(1 << 12);
    const uint32_t engine[] = {group_index("EngineEvents")};
    ASSERT_EQ(t->start(engine), ZE_RESULT_SUCCESS);
    t->on_command(command(1));
    Record r;
    uint64_t lost = 0;
    EXPECT_EQ(t->drain(&r, sizeof r - 1, &lost), 0u);
    EXPECT_EQ(t->drain(nullptr, 1 << 12, &lost), 0u);
    EXPECT_EQ(t->drain(&r, sizeof r, &lost), sizeof r);
}

TEST_F(SimTraceTest, StopKeepsRecordsAndStartEmptiesAndResets) {
    auto t = make(1 << 12);
    const uint32_t engine[] = {group_index("EngineEvents")};
    ASSERT_EQ(t->start(engine), ZE_RESULT_SUCCESS);
    t->on_command(command(1));
    ASSERT_EQ(t->stop(), ZE_RESULT_SUCCESS);
    uint64_t lost = 0;
    EXPECT_EQ(drain_all(*t, &lost).size(), 8u);
    t->on_command(command(1));
    ASSERT_EQ(t->start(engine), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->produced(), 0u);
    t->on_command(command(1));
    ASSERT_EQ(t->start(engine), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(drain_all(*t, &lost).empty());
}

// The asynchronous source while a drainer keeps up: every record produced is drained or
// reported lost, and its counter values arrive in order.
TEST_F(SimTraceTest, AsyncSourceAccountsForEveryRecord) {
    auto t = make(1 << 14, 2'000'000);
    const uint32_t async[] = {group_index("AsyncEvents")};
    const uint32_t counter_id = SimTrace::groups()[async[0]].first_metric_id;
    ASSERT_EQ(t->start(async), ZE_RESULT_SUCCESS);
    uint64_t received = 0, lost = 0, last_counter = 0;
    bool first = true, ordered = true;
    std::vector<Record> buf(1024);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
    auto take = [&] {
        const size_t n = t->drain(buf.data(), buf.size() * sizeof(Record), &lost) / sizeof(Record);
        for (size_t i = 0; i < n; ++i) {
            if (buf[i].metric != counter_id) continue;
            if (!first && buf[i].value <= last_counter) ordered = false;
            last_counter = buf[i].value;
            first = false;
        }
        received += n;
        return n;
    };
    while (std::chrono::steady_clock::now() < until) {
        if (take() == 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    ASSERT_EQ(t->stop(), ZE_RESULT_SUCCESS);
    while (take() != 0) {
    }
    take();  // losses after the last record
    EXPECT_GT(received, 0u);
    EXPECT_TRUE(ordered);
    EXPECT_EQ(received + lost, t->produced());
    const uint64_t after = t->produced();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(t->produced(), after);  // stopped means stopped
}

TEST_F(SimTraceTest, AsyncBurstIsInTheBufferWhenStartReturns) {
    SimConfig c;
    c.trace_buffer_bytes = 1000 * sizeof(Record);
    c.async_records_per_s = 0;
    c.async_burst_records = 1000 + 10'000;  // more than one chunk, 10 000 beyond the buffer
    c.subdevices = 3;
    auto t = SimTrace::create(c, clock_);
    const uint32_t async[] = {group_index("AsyncEvents")};
    const uint32_t counter_id = SimTrace::groups()[async[0]].first_metric_id;
    ASSERT_EQ(t->start(async), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->produced(), 11'000u);
    uint64_t lost = 0;
    const std::vector<Record> recs = drain_all(*t, &lost);
    ASSERT_EQ(recs.size(), 1000u);
    EXPECT_EQ(lost, 10'000u);
    for (size_t i = 0; i < recs.size(); ++i) {
        // Alternating metrics, the counter counting up from 0, sub-devices in turn.
        EXPECT_EQ(recs[i].kind, hal::kRecordSample);
        EXPECT_EQ(recs[i].metric, counter_id + i % 2);
        if (i % 2 == 0) {
            EXPECT_EQ(recs[i].value, i / 2);
        }
        EXPECT_EQ(recs[i].subdevice, i % 3);
        EXPECT_EQ(recs[i].ticks, recs[0].ticks);  // made at one instant
    }
    // A restart emits the burst again, numbered from 0.
    ASSERT_EQ(t->stop(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->start(async), ZE_RESULT_SUCCESS);
    Record first{};
    ASSERT_EQ(t->drain(&first, sizeof first, &lost), sizeof first);
    EXPECT_EQ(first.value, 0u);
}

TEST_F(SimTraceTest, AsyncTicksAreSpreadAndNeverGoBack) {
    auto t = make(1 << 20, 4'000'000, 20);  // ticks wrap at 2^20 (about 55 ms)
    const uint32_t async[] = {group_index("AsyncEvents")};
    ASSERT_EQ(t->start(async), ZE_RESULT_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ASSERT_EQ(t->stop(), ZE_RESULT_SUCCESS);
    uint64_t lost = 0;
    const std::vector<Record> recs = drain_all(*t, &lost);
    ASSERT_GT(recs.size(), 1000u);
    std::set<uint64_t> distinct;
    for (size_t i = 1; i < recs.size(); ++i) {
        EXPECT_LT(recs[i].ticks, 1u << 20);
        // Forward modulo the wrap, by less than half of it.
        EXPECT_LT((recs[i].ticks - recs[i - 1].ticks) & ((1u << 20) - 1), 1u << 19) << i;
        distinct.insert(recs[i].ticks);
    }
    EXPECT_GT(distinct.size(), recs.size() / 20);  // spread over each period, not bunched
}

TEST_F(SimTraceTest, ProducersOnManyThreads) {
    auto t = make(1 << 12);
    const uint32_t groups[] = {group_index("EngineEvents"), SimTrace::export_group()};
    ASSERT_EQ(t->start(groups), ZE_RESULT_SUCCESS);
    std::atomic<bool> stop{false};
    uint64_t received = 0, lost = 0;
    std::thread drainer([&] {
        std::vector<Record> buf(64);
        while (!stop.load()) received += t->drain(buf.data(), buf.size() * sizeof(Record), &lost) / sizeof(Record);
    });
    std::vector<std::thread> producers;
    for (int p = 0; p < 3; ++p) {
        producers.emplace_back([&, p] {
            for (int i = 0; i < 2000; ++i) {
                if (p == 0)
                    t->on_export_write(SimTrace::export_group(), static_cast<uint32_t>(i), 1, hal::kRootDevice);
                else
                    t->on_command(command(static_cast<uint64_t>(i)));
            }
        });
    }
    for (auto& th : producers) th.join();
    stop = true;
    drainer.join();
    std::vector<Record> rest(1024);
    for (size_t n; (n = t->drain(rest.data(), rest.size() * sizeof(Record), &lost)) != 0;)
        received += n / sizeof(Record);
    t->drain(rest.data(), rest.size() * sizeof(Record), &lost);
    EXPECT_EQ(t->produced(), 2000u + 2 * 2000u * 8u);
    EXPECT_EQ(received + lost, t->produced());
}

}  // namespace
}  // namespace zehal::sim
