// Metric streamers and queries on fresh sim devices: the counters of EngineUtilization
// sampled every period or between two points of a queue, their raw reports and the values
// calculated from them, bad input, and threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <mutex>
#include <span>
#include <thread>

#include "hal/sim/sim_counters.hpp"
#include "metrics/counter_report.hpp"
#include "metrics/query.hpp"
#include "metrics/streamer.hpp"
#include "metrics_test_util.hpp"
#include "wrapped_device.hpp"

namespace zehal::metrics::test {
namespace {

using namespace std::chrono_literals;

// EngineUtilization of `d`, activated.
MetricGroupRef utilization(const hal::DeviceRef& d) {
    MetricGroupRef g = group_named(d, "EngineUtilization");
    EXPECT_EQ(activate(d, std::vector<MetricGroupRef>{g}), ZE_RESULT_SUCCESS);
    return g;
}

// Fills `bytes` of fresh device memory `times` times on the copy engine and waits.
void run_fills(const hal::DeviceRef& d, size_t bytes, int times) {
    void* p = nullptr;
    ASSERT_EQ(d->allocate(hal::MemoryKind::device, bytes, 64, 0, 0, &p), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    const uint8_t pattern = 0x5A;
    for (int i = 0; i < times; ++i) ASSERT_EQ(q->append_fill(p, &pattern, 1, bytes, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->free(p), ZE_RESULT_SUCCESS);
}

// Opens a streamer on `g` (already active) with `period` ns and `notify` reports.
std::shared_ptr<Streamer> open_streamer(const hal::DeviceRef& d, const MetricGroup* g, uint32_t period = 100'000,
                                        uint32_t notify = 1, const hal::EventRef& event = nullptr) {
    std::shared_ptr<Streamer> s;
    EXPECT_EQ(Streamer::open(d, g, &period, &notify, event, &s), ZE_RESULT_SUCCESS);
    return s;
}

// Everything the streamer holds now.
std::vector<uint8_t> read_all(Streamer& s) {
    size_t size = 0;
    EXPECT_EQ(s.read(UINT32_MAX, &size, nullptr), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> raw(size);
    if (size) {
        EXPECT_EQ(s.read(UINT32_MAX, &size, raw.data()), ZE_RESULT_SUCCESS);
    }
    raw.resize(size);
    return raw;
}

// Sum of metric `m` (a uint64 metric) over every report of `raw`.
uint64_t sum_of(const MetricGroup& g, const std::vector<uint8_t>& raw, uint32_t m) {
    if (raw.empty()) return 0;
    std::vector<TypedValue> values;
    EXPECT_EQ(calculate(g, 0, raw, &values), ZE_RESULT_SUCCESS);
    const size_t n = g.metrics().size();
    EXPECT_EQ(values.size() % n, 0u);
    uint64_t sum = 0;
    for (size_t i = m; i < values.size(); i += n) sum += values[i].bits;
    return sum;
}

TEST(Streamer, OpenChecksItsArguments) {
    auto d = make_device(quiet());
    auto util = group_named(d, "EngineUtilization");
    auto engine = group_named(d, "EngineEvents");
    auto other = make_device(quiet());
    auto other_util = group_named(other, "EngineUtilization");
    uint32_t period = 100'000, notify = 1;
    std::shared_ptr<Streamer> s;
    EXPECT_EQ(Streamer::open(nullptr, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(Streamer::open(d, util.get(), nullptr, &notify, nullptr, &s), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(Streamer::open(d, nullptr, &period, &notify, nullptr, &s), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(Streamer::open(d, engine.get(), &period, &notify, nullptr, &s), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(Streamer::open(d, other_util.get(), &period, &notify, nullptr, &s), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // Not activated yet.
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_NOT_READY);
    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{util}), ZE_RESULT_SUCCESS);
    // Activating another group of another domain does not deactivate it; activating a set
    // without it does.
    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{engine, util}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_SUCCESS);
    std::shared_ptr<Streamer> second;
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &second), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    ASSERT_EQ(s->close(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(s->close(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{engine}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &second), ZE_RESULT_NOT_READY);
}

TEST(Streamer, CorrectsPeriodAndReportCountAndWritesThemBack) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    uint32_t period = 1, notify = 0;
    std::shared_ptr<Streamer> s;
    ASSERT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_SUCCESS);
    EXPECT_EQ(period, Streamer::kMinPeriodNs);
    EXPECT_EQ(notify, 1u);
    ASSERT_EQ(s->close(), ZE_RESULT_SUCCESS);
    period = 0;
    notify = UINT32_MAX;
    ASSERT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_SUCCESS);
    EXPECT_EQ(period, Streamer::kDefaultPeriodNs);
    EXPECT_EQ(notify, Streamer::kRingReports);
}

TEST(Streamer, ReportsCountEveryByteTheEnginesWrote) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    auto s = open_streamer(d, util.get());
    run_fills(d, 4096, 5);
    // Every fill completed; the reports of the windows that hold their completions come
    // within a few periods.
    std::vector<uint8_t> raw;
    ASSERT_TRUE(eventually([&] {
        auto more = read_all(*s);
        raw.insert(raw.end(), more.begin(), more.end());
        return sum_of(*util, raw, sim::kUtilBytesMoved) == 5 * 4096u;
    }));
    EXPECT_EQ(sum_of(*util, raw, sim::kUtilDataCommands), 5u);
    // Windows follow each other without gaps; headers name the group.
    CounterReportHeader prev{};
    for (size_t at = 0; at < raw.size(); at += s->report_size()) {
        CounterReportHeader h;
        std::memcpy(&h, raw.data() + at, sizeof h);
        EXPECT_EQ(h.kind, kReportSample);
        EXPECT_EQ(h.size, s->report_size());
        EXPECT_EQ(h.group_id, util->info().first_metric_id);
        if (at) {
            EXPECT_EQ(h.begin_ticks, prev.end_ticks);
            EXPECT_EQ(h.sequence, prev.sequence + 1);
        }
        EXPECT_LE(h.begin_ticks, h.end_ticks);
        prev = h;
    }
}

TEST(Streamer, ReadsWholeReportsUpToTheSizeAndCountGiven) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    auto s = open_streamer(d, util.get(), Streamer::kMinPeriodNs);
    const size_t rs = s->report_size();
    ASSERT_TRUE(eventually([&] {
        size_t size = 0;
        return s->read(UINT32_MAX, &size, nullptr) == ZE_RESULT_SUCCESS && size >= 3 * rs;
    }));
    size_t size = 0;
    ASSERT_EQ(s->read(2, &size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, 2 * rs);  // a size query honours the report count
    std::vector<uint8_t> buf(3 * rs);
    size = rs + rs / 2;  // one and a half reports: one is copied
    ASSERT_EQ(s->read(UINT32_MAX, &size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, rs);
    size = buf.size();
    ASSERT_EQ(s->read(1, &size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, rs);
    size = rs / 2;  // less than a report: nothing
    ASSERT_EQ(s->read(UINT32_MAX, &size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, 0u);
    EXPECT_EQ(s->read(UINT32_MAX, nullptr, buf.data()), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    size = rs;
    EXPECT_EQ(s->read(UINT32_MAX, &size, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(s->close(), ZE_RESULT_SUCCESS);
    size = 0;
    EXPECT_EQ(s->read(UINT32_MAX, &size, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST(Streamer, SignalsItsEventOnceTheReportsAreThere) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    std::shared_ptr<hal::EventPool> pool;
    ASSERT_EQ(d->create_event_pool(1, hal::kPoolHostVisible, &pool), ZE_RESULT_SUCCESS);
    hal::EventRef event;
    ASSERT_EQ(pool->event(0, &event), ZE_RESULT_SUCCESS);
    auto s = open_streamer(d, util.get(), Streamer::kMinPeriodNs, 8, event);
    ASSERT_EQ(event->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    size_t size = 0;
    ASSERT_EQ(s->read(UINT32_MAX, &size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_GE(size, 8 * s->report_size());
    // An event of another device, or of a pool the host cannot see, is refused.
    auto other = make_device(quiet());
    std::shared_ptr<hal::EventPool> other_pool;
    ASSERT_EQ(other->create_event_pool(1, hal::kPoolHostVisible, &other_pool), ZE_RESULT_SUCCESS);
    hal::EventRef foreign;
    ASSERT_EQ(other_pool->event(0, &foreign), ZE_RESULT_SUCCESS);
    ASSERT_EQ(s->close(), ZE_RESULT_SUCCESS);
    uint32_t period = 0, notify = 1;
    std::shared_ptr<Streamer> t;
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &notify, foreign, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(Streamer, ReadersAndACloseFromOtherThreads) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    auto s = open_streamer(d, util.get(), Streamer::kMinPeriodNs);
    std::atomic<bool> stop{false};
    std::vector<std::thread> readers;
    for (int i = 0; i < 3; ++i)
        readers.emplace_back([&s, &stop] {
            std::vector<uint8_t> buf(1 << 14);
            while (!stop.load()) {
                size_t size = buf.size();
                const ze_result_t r = s->read(UINT32_MAX, &size, buf.data());
                EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_INVALID_NULL_HANDLE) << r;
                EXPECT_EQ(size % s->report_size(), 0u);
            }
        });
    std::thread filler([&d] { run_fills(d, 1024, 50); });
    filler.join();
    std::thread closer([&s] { EXPECT_EQ(s->close(), ZE_RESULT_SUCCESS); });
    closer.join();
    stop = true;
    for (auto& t : readers) t.join();
}

// The header and StreamMarker value (the group's last metric) of each report of `raw`.
struct Shown {
    CounterReportHeader header;
    uint64_t marker;
};
std::vector<Shown> reports_of(const MetricGroup& g, const std::vector<uint8_t>& raw) {
    const size_t rs = report_size(g);
    const size_t marker_at = sizeof(CounterReportHeader) + (g.metrics().size() - 1) * sizeof(uint64_t);
    std::vector<Shown> out;
    for (size_t at = 0; at + rs <= raw.size(); at += rs) {
        Shown r{};
        std::memcpy(&r.header, raw.data() + at, sizeof r.header);
        std::memcpy(&r.marker, raw.data() + at + marker_at, sizeof r.marker);
        out.push_back(r);
    }
    return out;
}

// Reads `s` into *shown until `markers` reports carry a marker.
bool read_markers(Streamer& s, const MetricGroup& g, size_t markers, std::vector<Shown>* shown) {
    return eventually([&] {
        const auto more = reports_of(g, read_all(s));
        shown->insert(shown->end(), more.begin(), more.end());
        return static_cast<size_t>(std::count_if(shown->begin(), shown->end(),
                                                 [](const Shown& r) { return r.marker != 0; })) >= markers;
    });
}

// Queues marker `slot`'s command on `q`: the global timestamp into it, signalling its event.
void queue_marker(hal::Queue& q, const Streamer::MarkerSlot& slot) {
    ASSERT_EQ(q.append_write_global_timestamp(slot.ticks, slot.landed, {}), ZE_RESULT_SUCCESS);
}

// Markers whose timestamps a queue wrote: in the order appended, each ends a report (the
// reports stay contiguous), every other report carries 0.
TEST(Streamer, EachMarkerEndsTheReportOfItsTimestamp) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    ASSERT_EQ(util->metrics().size(), sim::kUtilMetricCount + 1u);
    EXPECT_EQ(util->metrics().back().info().name, hal::kStreamMarkerName);
    auto s = open_streamer(d, util.get());
    EXPECT_EQ(s->can_mark(), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    void* p = nullptr;
    ASSERT_EQ(d->allocate(hal::MemoryKind::device, 4096, 64, 0, 0, &p), ZE_RESULT_SUCCESS);
    const uint8_t pattern = 3;
    // Three slots, taken before any marker ran (a slot whose marker showed serves the next).
    std::vector<Streamer::MarkerSlot> slots(3);
    for (size_t i = 0; i < slots.size(); ++i)
        ASSERT_EQ(s->add_marker(static_cast<uint32_t>(10 * (i + 1)), &slots[i]), ZE_RESULT_SUCCESS);
    queue_marker(*q, slots[0]);
    ASSERT_EQ(q->append_fill(p, &pattern, 1, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
    // Two markers back to back: most often in one period, which they split.
    queue_marker(*q, slots[1]);
    queue_marker(*q, slots[2]);
    ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    // No marker is added from here on: the slots keep their timestamps.
    std::vector<uint64_t> stamps;
    for (const auto& slot : slots) stamps.push_back(*slot.ticks);
    std::vector<Shown> shown;
    ASSERT_TRUE(read_markers(*s, *util, 3, &shown));
    std::vector<uint64_t> values;
    size_t marked = 0;
    for (size_t i = 0; i < shown.size(); ++i) {
        const CounterReportHeader& h = shown[i].header;
        if (i) {
            EXPECT_EQ(h.begin_ticks, shown[i - 1].header.end_ticks);
            EXPECT_EQ(h.sequence, shown[i - 1].header.sequence + 1);
        }
        if (shown[i].marker == 0) continue;
        values.push_back(shown[i].marker);
        ASSERT_LT(marked, stamps.size());
        // Ends at the marker's timestamp; or, where the timestamp landed only after the report
        // holding its tick was written, an empty window right after that report.
        if (h.begin_ticks != h.end_ticks)
            EXPECT_EQ(h.end_ticks, stamps[marked]);
        else
            EXPECT_GE(h.end_ticks, stamps[marked]);
        ++marked;
    }
    EXPECT_EQ(values, (std::vector<uint64_t>{10, 20, 30}));
    ASSERT_EQ(d->free(p), ZE_RESULT_SUCCESS);
}

// The report ending at a marker has ended once the marker's timestamp is there: the first
// read after its command ran returns it, long before the period ends.
TEST(Streamer, TheFirstReadAfterAMarkerRanReturnsItsReport) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    auto s = open_streamer(d, util.get(), 4'000'000'000u);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    Streamer::MarkerSlot slot;
    ASSERT_EQ(s->add_marker(42, &slot), ZE_RESULT_SUCCESS);
    queue_marker(*q, slot);
    ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    const uint64_t stamp = *slot.ticks;
    const auto shown = reports_of(*util, read_all(*s));
    const auto marked = std::find_if(shown.begin(), shown.end(), [](const Shown& r) { return r.marker != 0; });
    ASSERT_NE(marked, shown.end());
    EXPECT_EQ(marked->marker, 42u);
    EXPECT_EQ(marked->header.end_ticks, stamp);
    // Shown: its slot serves the next marker.
    Streamer::MarkerSlot next;
    ASSERT_EQ(s->add_marker(43, &next), ZE_RESULT_SUCCESS);
    EXPECT_EQ(next.ticks, slot.ticks);
    EXPECT_EQ(next.landed->query(), ZE_RESULT_NOT_READY);
    queue_marker(*q, next);
    ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    const auto again = reports_of(*util, read_all(*s));
    ASSERT_FALSE(again.empty());
    EXPECT_EQ(again.back().marker, 43u);
}

TEST(Streamer, MarkersCheckTheirArguments) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    auto s = open_streamer(d, util.get());
    EXPECT_EQ(s->add_marker(1, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    // A marker whose command could not be queued is forgotten; its slot serves the next one.
    Streamer::MarkerSlot slot;
    ASSERT_EQ(s->add_marker(1, &slot), ZE_RESULT_SUCCESS);
    s->drop_marker(slot);
    Streamer::MarkerSlot again;
    ASSERT_EQ(s->add_marker(2, &again), ZE_RESULT_SUCCESS);
    EXPECT_EQ(again.ticks, slot.ticks);
    // Many markers whose commands have not run: slots come from more memory as needed.
    std::vector<uint64_t*> slots{again.ticks};
    for (int i = 0; i < 2000; ++i) {
        Streamer::MarkerSlot more;
        ASSERT_EQ(s->add_marker(3, &more), ZE_RESULT_SUCCESS);
        ASSERT_TRUE(more.landed);
        slots.push_back(more.ticks);
    }
    std::sort(slots.begin(), slots.end());
    EXPECT_EQ(std::adjacent_find(slots.begin(), slots.end()), slots.end());
    ASSERT_EQ(s->close(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(s->can_mark(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(s->add_marker(1, &slot), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

// A begin and an end written by `q` around `fills` fills of `bytes`.
void run_query(const hal::DeviceRef& d, hal::Queue& q, Query& query, size_t bytes, int fills) {
    void* p = nullptr;
    ASSERT_EQ(d->allocate(hal::MemoryKind::device, bytes, 64, 0, 0, &p), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q.append_write_global_timestamp(query.begin_slot(), nullptr, {}), ZE_RESULT_SUCCESS);
    query.began();
    const uint8_t pattern = 1;
    for (int i = 0; i < fills; ++i) ASSERT_EQ(q.append_fill(p, &pattern, 1, bytes, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q.append_write_global_timestamp(query.end_slot(), query.end_event(), {}), ZE_RESULT_SUCCESS);
    query.ended();
    ASSERT_EQ(q.host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->free(p), ZE_RESULT_SUCCESS);
}

TEST(Query, CountsTheCommandsBetweenItsBeginAndEnd) {
    auto d = make_device(quiet());
    auto util = utilization(d);
    std::shared_ptr<QueryPool> pool;
    ASSERT_EQ(QueryPool::create(d, util.get(), 4, &pool), ZE_RESULT_SUCCESS);
    std::shared_ptr<Query> query;
    ASSERT_EQ(Query::create(pool, 3, &query), ZE_RESULT_SUCCESS);
    size_t size = 0;
    EXPECT_EQ(query->get_data(&size, nullptr), ZE_RESULT_NOT_READY);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    run_fills(d, 512, 2);  // before the begin: not counted
    run_query(d, *q, *query, 2048, 3);
    run_fills(d, 512, 2);  // after the end: not counted
    ASSERT_EQ(query->get_data(&size, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(size, report_size(*util));
    std::vector<uint8_t> raw(size);
    size = raw.size() - 1;
    EXPECT_EQ(query->get_data(&size, raw.data()), ZE_RESULT_ERROR_INVALID_SIZE);
    size = raw.size();
    ASSERT_EQ(query->get_data(&size, raw.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(sum_of(*util, raw, sim::kUtilBytesMoved), 3 * 2048u);
    EXPECT_EQ(sum_of(*util, raw, sim::kUtilDataCommands), 3u);
    std::vector<TypedValue> values;
    ASSERT_EQ(calculate(*util, 0, raw, &values), ZE_RESULT_SUCCESS);
    EXPECT_GE(values[sim::kUtilGpuTime].bits, values[sim::kUtilBusyTime].bits / 3);
    const float busy = std::bit_cast<float>(static_cast<uint32_t>(values[sim::kUtilBusyPercent].bits));
    EXPECT_GE(busy, 0.0f);
    EXPECT_LE(busy, 100.0f);
    EXPECT_EQ(values[sim::kUtilBusyPercent].type, hal::kFp32);
    // StreamMarker, the group's last metric, is the streamers': 0 in a query's report.
    ASSERT_EQ(values.size(), sim::kUtilMetricCount + 1u);
    EXPECT_EQ(values[sim::kUtilMetricCount].bits, 0u);
    // Reset: not ready again until the next end ran.
    ASSERT_EQ(query->reset(), ZE_RESULT_SUCCESS);
    size = 0;
    EXPECT_EQ(query->get_data(&size, nullptr), ZE_RESULT_NOT_READY);
    run_query(d, *q, *query, 256, 1);
    size = raw.size();
    ASSERT_EQ(query->get_data(&size, raw.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(sum_of(*util, raw, sim::kUtilBytesMoved), 256u);
}

TEST(Query, PoolsAndQueriesCheckTheirArguments) {
    auto d = make_device(quiet());
    auto util = group_named(d, "EngineUtilization");
    auto engine = group_named(d, "EngineEvents");
    auto other = make_device(quiet());
    std::shared_ptr<QueryPool> pool;
    EXPECT_EQ(QueryPool::create(nullptr, util.get(), 1, &pool), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(QueryPool::create(d, nullptr, 1, &pool), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(QueryPool::create(d, util.get(), 1, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(QueryPool::create(d, util.get(), 0, &pool), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(QueryPool::create(d, engine.get(), 1, &pool), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(QueryPool::create(other, util.get(), 1, &pool), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(QueryPool::create(d, util.get(), 2, &pool), ZE_RESULT_SUCCESS);
    std::shared_ptr<Query> query;
    EXPECT_EQ(Query::create(nullptr, 0, &query), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(Query::create(pool, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(Query::create(pool, 2, &query), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(Query::create(pool, 1, &query), ZE_RESULT_SUCCESS);
    EXPECT_EQ(query->get_data(nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

// A report of `g` with `values`.
std::vector<uint8_t> report(const MetricGroup& g, std::vector<uint64_t> values, uint16_t kind = kReportQuery) {
    std::vector<uint8_t> raw(report_size(g));
    write_report(g, kind, 0, 10, 20, values, raw.data());
    return raw;
}

// The counters of a wrapped device, which refuse to start (use(true)) the next `refusals`
// times, as a device whose counters another process samples, and count the starts and stops
// that reach them.
class RefusingCounters final : public hal::CounterSource {
public:
    explicit RefusingCounters(hal::CounterSource* inner) : inner_(inner) {}
    uint64_t now_ticks() const override { return inner_->now_ticks(); }
    ze_result_t window(uint32_t group, uint64_t begin, uint64_t end, std::span<uint64_t> values) const override {
        return inner_->window(group, begin, end, values);
    }
    ze_result_t use(bool reading) override {
        std::lock_guard lock(mu_);
        if (reading && refusals_ > 0) {
            --refusals_;
            return ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE;
        }
        ++(reading ? starts_ : stops_);
        if (stops_ > starts_) ADD_FAILURE() << "a stop without a start";
        return inner_->use(reading);
    }
    // Refuses the next `n` starts.
    void refuse(uint32_t n) {
        std::lock_guard lock(mu_);
        refusals_ = n;
    }
    // Starts that reached the counters, less the stops.
    int in_use() const {
        std::lock_guard lock(mu_);
        return starts_ - stops_;
    }

private:
    hal::CounterSource* const inner_;
    mutable std::mutex mu_;
    uint32_t refusals_ = 0;
    int starts_ = 0;
    int stops_ = 0;
};

// A sim device whose counters are RefusingCounters.
class RefusingCountersDevice final : public WrappedDevice {
public:
    explicit RefusingCountersDevice(hal::DeviceRef d) : WrappedDevice(d), counters_(d->counter_source()) {}
    hal::CounterSource* counter_source() override { return &counters_; }
    RefusingCounters& counters() { return counters_; }

private:
    RefusingCounters counters_;
};

TEST(CounterStart, ARefusedStartRefusesTheStreamerAndFreesItsSlot) {
    auto d = std::make_shared<RefusingCountersDevice>(make_device(quiet()));
    auto util = utilization(d);
    uint32_t period = 100'000, notify = 1;
    std::shared_ptr<Streamer> s;
    d->counters().refuse(2);
    // Refused twice: the first refusal gave the device's streamer slot back.
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
    EXPECT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
    EXPECT_FALSE(s);
    EXPECT_EQ(d->counters().in_use(), 0);
    // The counters start now: the open succeeds and samples.
    ASSERT_EQ(Streamer::open(d, util.get(), &period, &notify, nullptr, &s), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->counters().in_use(), 1);
    EXPECT_TRUE(eventually([&] {
        size_t size = 0;
        return s->read(UINT32_MAX, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0;
    }));
    ASSERT_EQ(s->close(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->counters().in_use(), 0);
}

TEST(CounterStart, ARefusedStartRefusesTheQueryPool) {
    auto d = std::make_shared<RefusingCountersDevice>(make_device(quiet()));
    auto util = utilization(d);
    std::shared_ptr<QueryPool> pool;
    d->counters().refuse(1);
    EXPECT_EQ(QueryPool::create(d, util.get(), 1, &pool), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
    EXPECT_FALSE(pool);
    EXPECT_EQ(d->counters().in_use(), 0);
    ASSERT_EQ(QueryPool::create(d, util.get(), 1, &pool), ZE_RESULT_SUCCESS);
    EXPECT_EQ(d->counters().in_use(), 1);
    pool.reset();
    EXPECT_EQ(d->counters().in_use(), 0);
}

TEST(Calculate, RefusesWhatIsNotWholeReportsOfTheGroup) {
    auto d = make_device(quiet());
    auto util = group_named(d, "EngineUtilization");
    auto engine = group_named(d, "EngineEvents");
    const auto good = report(*util, {std::bit_cast<uint32_t>(50.0f), 100, 50, 1, 64, 0});
    std::vector<TypedValue> values;
    EXPECT_EQ(calculate(*util, 0, {}, &values), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(calculate(*util, 2, good, &values), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(calculate(*util, 0, std::span(good).first(good.size() - 1), &values), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(calculate(*util, 0, std::span(good).first(10), &values), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    auto two = good;
    two.insert(two.end(), good.begin(), good.begin() + 40);  // a whole report, then part of one
    EXPECT_EQ(calculate(*util, 0, two, &values), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    auto bad_kind = good;
    bad_kind[0] = 1;
    EXPECT_EQ(calculate(*util, 0, bad_kind, &values), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    auto bad_size = good;
    bad_size[2] = 0;
    EXPECT_EQ(calculate(*util, 0, bad_size, &values), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // A report of this group is no report of another.
    EXPECT_EQ(calculate(*engine, 0, good, &values), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(values.empty());
    ASSERT_EQ(calculate(*util, 0, good, &values), ZE_RESULT_SUCCESS);
    ASSERT_EQ(values.size(), util->metrics().size());
    EXPECT_EQ(values[sim::kUtilBytesMoved].bits, 64u);
    EXPECT_EQ(values[sim::kUtilBytesMoved].type, hal::kUint64);
}

TEST(Calculate, MaxValuesTakeTheLargestOfEveryReport) {
    auto d = make_device(quiet());
    auto util = group_named(d, "EngineUtilization");
    auto raw = report(*util, {std::bit_cast<uint32_t>(75.0f), 100, 75, 1, 64, 0}, kReportSample);
    const auto second = report(*util, {std::bit_cast<uint32_t>(25.5f), 300, 75, 3, 16, 9}, kReportSample);
    raw.insert(raw.end(), second.begin(), second.end());
    std::vector<TypedValue> values;
    ASSERT_EQ(calculate(*util, 0, raw, &values), ZE_RESULT_SUCCESS);
    EXPECT_EQ(values.size(), 2 * util->metrics().size());
    values.clear();
    ASSERT_EQ(calculate(*util, 1, raw, &values), ZE_RESULT_SUCCESS);
    ASSERT_EQ(values.size(), util->metrics().size());
    EXPECT_EQ(std::bit_cast<float>(static_cast<uint32_t>(values[sim::kUtilBusyPercent].bits)), 75.0f);
    EXPECT_EQ(values[sim::kUtilGpuTime].bits, 300u);
    EXPECT_EQ(values[sim::kUtilDataCommands].bits, 3u);
    EXPECT_EQ(values[sim::kUtilBytesMoved].bits, 64u);
    EXPECT_EQ(values[sim::kUtilMetricCount].bits, 9u);  // StreamMarker
}

}  // namespace
}  // namespace zehal::metrics::test
