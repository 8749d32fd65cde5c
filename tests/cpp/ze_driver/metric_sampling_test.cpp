// Metric streamers, metric queries and the calculation of their raw data through the
// loader: the sim device's event- and time-based group EngineUtilization; the notification
// events of streamers and tracers; the source of each group.
#include <atomic>
#include <chrono>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

class ZeMetricSampling : public ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        util = group_named("EngineUtilization");
        engine = group_named("EngineEvents");
        if (!util) GTEST_SKIP() << "no EngineUtilization group";
        ZE_OK(zetContextActivateMetricGroups(context, device, 1, &util));
        ZE_OK(zetMetricGet(util, &metric_count, nullptr));
    }
    // The sim device, the last one (CUDA devices come first where they exist).
    ze_device_handle_t pick_device() override { return devices.back(); }
    void TearDown() override {
        if (util) {
            EXPECT_EQ(zetContextActivateMetricGroups(context, device, 0, nullptr), ZE_RESULT_SUCCESS);
        }
        ZeDriver::TearDown();
    }
    zet_metric_group_handle_t group_named(const std::string& name) {
        uint32_t n = 0;
        EXPECT_EQ(zetMetricGroupGet(device, &n, nullptr), ZE_RESULT_SUCCESS);
        std::vector<zet_metric_group_handle_t> groups(n);
        EXPECT_EQ(zetMetricGroupGet(device, &n, groups.data()), ZE_RESULT_SUCCESS);
        for (auto g : groups) {
            zet_metric_group_properties_t p{};
            p.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
            EXPECT_EQ(zetMetricGroupGetProperties(g, &p), ZE_RESULT_SUCCESS);
            if (name == p.name) return g;
        }
        return nullptr;
    }
    // Index of metric `name` of EngineUtilization.
    uint32_t metric_index(const char* name) {
        std::vector<zet_metric_handle_t> metrics(metric_count);
        uint32_t n = metric_count;
        EXPECT_EQ(zetMetricGet(util, &n, metrics.data()), ZE_RESULT_SUCCESS);
        for (uint32_t i = 0; i < n; ++i) {
            zet_metric_properties_t p{};
            p.stype = ZET_STRUCTURE_TYPE_METRIC_PROPERTIES;
            EXPECT_EQ(zetMetricGetProperties(metrics[i], &p), ZE_RESULT_SUCCESS);
            if (std::strcmp(p.name, name) == 0) return i;
        }
        ADD_FAILURE() << "no metric " << name;
        return 0;
    }
    // The values of `raw`, through zetMetricGroupCalculateMetricValues.
    std::vector<zet_typed_value_t> values_of(const std::vector<uint8_t>& raw) {
        uint32_t n = 0;
        EXPECT_EQ(zetMetricGroupCalculateMetricValues(util, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(),
                                                      raw.data(), &n, nullptr),
                  ZE_RESULT_SUCCESS);
        std::vector<zet_typed_value_t> v(n);
        EXPECT_EQ(zetMetricGroupCalculateMetricValues(util, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, raw.size(),
                                                      raw.data(), &n, v.data()),
                  ZE_RESULT_SUCCESS);
        v.resize(n);
        return v;
    }
    zet_metric_group_handle_t util = nullptr;
    zet_metric_group_handle_t engine = nullptr;
    uint32_t metric_count = 0;
};

TEST_F(ZeMetricSampling, StreamerSamplesTheCopiesOfTheDevice) {
    ze_command_list_handle_t l = immediate_list(1);
    zet_metric_streamer_desc_t desc{ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, nullptr, 4, 1};
    zet_metric_streamer_handle_t s = nullptr;
    ZE_OK(zetMetricStreamerOpen(context, device, util, &desc, nullptr, &s));
    EXPECT_GT(desc.samplingPeriod, 1u);  // corrected and written back
    ZE_OK(zeCommandListAppendMemoryCopy(l, dev, host, 4096, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(l, host2, dev, 4096, nullptr, 0, nullptr));
    finish(l);
    const uint32_t bytes = metric_index("BytesMoved");
    uint64_t moved = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (moved < 8192 && std::chrono::steady_clock::now() < deadline) {
        size_t size = 0;
        ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
        std::vector<uint8_t> raw(size);
        if (size == 0) continue;
        ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, raw.data()));
        raw.resize(size);
        const auto v = values_of(raw);
        ASSERT_EQ(v.size() % metric_count, 0u);
        for (size_t i = bytes; i < v.size(); i += metric_count) {
            EXPECT_EQ(v[i].type, ZET_VALUE_TYPE_UINT64);
            moved += v[i].value.ui64;
        }
    }
    EXPECT_EQ(moved, 8192u);
    ZE_OK(zetMetricStreamerClose(s));
    EXPECT_EQ(zetMetricStreamerClose(s), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    size_t size = 0;
    EXPECT_EQ(zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListDestroy(l), ZE_RESULT_SUCCESS);
}

// Reads streamer `s` until `markers` reports carry a StreamMarker; appends the non-zero
// values, in report order, to *shown.
void read_markers(zet_metric_streamer_handle_t s, zet_metric_group_handle_t group, uint32_t metric_count,
                  uint32_t marker, size_t markers, std::vector<uint64_t>* shown) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (shown->size() < markers && std::chrono::steady_clock::now() < deadline) {
        size_t size = 0;
        ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, nullptr));
        if (size == 0) continue;
        std::vector<uint8_t> raw(size);
        ZE_OK(zetMetricStreamerReadData(s, UINT32_MAX, &size, raw.data()));
        uint32_t n = 0;
        ZE_OK(zetMetricGroupCalculateMetricValues(group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, size,
                                                  raw.data(), &n, nullptr));
        std::vector<zet_typed_value_t> v(n);
        ZE_OK(zetMetricGroupCalculateMetricValues(group, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, size,
                                                  raw.data(), &n, v.data()));
        ASSERT_EQ(n % metric_count, 0u);
        for (size_t i = marker; i < n; i += metric_count) {
            EXPECT_EQ(v[i].type, ZET_VALUE_TYPE_UINT32);
            if (v[i].value.ui64 != 0) shown->push_back(v[i].value.ui64);
        }
    }
}

// Markers show in the StreamMarker metric of one report each, in the order appended: once
// for an immediate list, at every execution for a regular one.
TEST_F(ZeMetricSampling, StreamerMarkersShowInOneReportEach) {
    zet_metric_streamer_desc_t desc{ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, nullptr, 1, 100000};
    zet_metric_streamer_handle_t s = nullptr;
    ZE_OK(zetMetricStreamerOpen(context, device, util, &desc, nullptr, &s));
    const uint32_t marker = metric_index("StreamMarker");
    ze_command_list_handle_t l = immediate_list(1);
    ZE_OK(zetCommandListAppendMetricStreamerMarker(l, s, 10));
    ZE_OK(zeCommandListAppendMemoryCopy(l, dev, host, 4096, nullptr, 0, nullptr));
    ZE_OK(zetCommandListAppendMetricStreamerMarker(l, s, 20));
    finish(l);
    std::vector<uint64_t> shown;
    read_markers(s, util, metric_count, marker, 2, &shown);
    EXPECT_EQ(shown, (std::vector<uint64_t>{10, 20}));

    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t r = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &r));
    ZE_OK(zetCommandListAppendMetricStreamerMarker(r, s, 30));
    ZE_OK(zeCommandListClose(r));
    // A closed list takes no more commands, markers included.
    EXPECT_EQ(zetCommandListAppendMetricStreamerMarker(r, s, 40), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    for (size_t run = 1; run <= 2; ++run) {
        ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &r, nullptr));
        ZE_OK(zeCommandQueueSynchronize(queue, kForever));
        read_markers(s, util, metric_count, marker, 2 + run, &shown);
    }
    EXPECT_EQ(shown, (std::vector<uint64_t>{10, 20, 30, 30}));

    EXPECT_EQ(zetCommandListAppendMetricStreamerMarker(nullptr, s, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zetCommandListAppendMetricStreamerMarker(l, nullptr, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // A list whose marker's streamer was closed runs nothing: its fill stays undone.
    ze_command_list_handle_t late = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &late));
    std::memset(host, 0, 64);
    ZE_OK(zeCommandListAppendMemoryFill(late, host, "\x11", 1, 64, nullptr, 0, nullptr));
    ZE_OK(zetCommandListAppendMetricStreamerMarker(late, s, 50));
    ZE_OK(zeCommandListClose(late));
    ZE_OK(zetMetricStreamerClose(s));
    EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue, 1, &late, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeCommandQueueSynchronize(queue, kForever));
    EXPECT_EQ(static_cast<const uint8_t*>(host)[0], 0u);
    // A closed streamer's handle is no handle any more.
    EXPECT_EQ(zetCommandListAppendMetricStreamerMarker(l, s, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeCommandQueueDestroy(queue));
    ZE_OK(zeCommandListDestroy(late));
    ZE_OK(zeCommandListDestroy(r));
    ZE_OK(zeCommandListDestroy(l));
}

// A marker for a streamer of another device (CTest runs this file with two sim devices).
TEST_F(ZeMetricSampling, StreamerMarkerOnAListOfAnotherDeviceIsRefused) {
    if (devices.size() < 2) GTEST_SKIP() << "one device";
    zet_metric_streamer_desc_t desc{ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, nullptr, 1, 100000};
    zet_metric_streamer_handle_t s = nullptr;
    ZE_OK(zetMetricStreamerOpen(context, device, util, &desc, nullptr, &s));
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t other = nullptr;
    ZE_OK(zeCommandListCreateImmediate(context, devices.front(), &qd, &other));
    EXPECT_EQ(zetCommandListAppendMetricStreamerMarker(other, s, 5), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeCommandListDestroy(other));
    ZE_OK(zetMetricStreamerClose(s));
}

TEST_F(ZeMetricSampling, StreamerOpenRefusesWhatItCannotSample) {
    zet_metric_streamer_desc_t desc{ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, nullptr, 1, 100000};
    zet_metric_streamer_handle_t s = nullptr;
    EXPECT_EQ(zetMetricStreamerOpen(context, device, util, nullptr, nullptr, &s), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zetMetricStreamerOpen(context, device, util, &desc, nullptr, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zetMetricStreamerOpen(context, device, nullptr, &desc, nullptr, &s), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // A tracer-based group has no sampled counters.
    EXPECT_EQ(zetMetricStreamerOpen(context, device, engine, &desc, nullptr, &s), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zetMetricStreamerOpen(context, device, util, &desc, nullptr, &s));
    zet_metric_streamer_handle_t second = nullptr;
    EXPECT_EQ(zetMetricStreamerOpen(context, device, util, &desc, nullptr, &second),
              ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    ZE_OK(zetMetricStreamerClose(s));
    // Activating only another group deactivates this one.
    ZE_OK(zetContextActivateMetricGroups(context, device, 1, &engine));
    EXPECT_EQ(zetMetricStreamerOpen(context, device, util, &desc, nullptr, &s), ZE_RESULT_NOT_READY);
}

TEST_F(ZeMetricSampling, QueryCountsTheCopyBetweenItsBeginAndEnd) {
    zet_metric_query_pool_desc_t pd{ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC, nullptr,
                                    ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, 2};
    zet_metric_query_pool_handle_t pool = nullptr;
    ZE_OK(zetMetricQueryPoolCreate(context, device, util, &pd, &pool));
    zet_metric_query_handle_t q = nullptr;
    ZE_OK(zetMetricQueryCreate(pool, 1, &q));
    size_t size = 0;
    EXPECT_EQ(zetMetricQueryGetData(q, &size, nullptr), ZE_RESULT_NOT_READY);
    ze_event_handle_t done = make_events(1)[0];
    ze_command_list_handle_t l = immediate_list(1);
    ZE_OK(zetCommandListAppendMetricQueryBegin(l, q));
    ZE_OK(zeCommandListAppendMemoryCopy(l, dev, host, 3000, nullptr, 0, nullptr));
    ZE_OK(zetCommandListAppendMetricMemoryBarrier(l));
    ZE_OK(zetCommandListAppendMetricQueryEnd(l, q, done, 0, nullptr));
    ZE_OK(zeEventHostSynchronize(done, kForever));
    ZE_OK(zeCommandListAppendMemoryCopy(l, dev, host, 1000, nullptr, 0, nullptr));  // after the end
    finish(l);
    ZE_OK(zetMetricQueryGetData(q, &size, nullptr));
    std::vector<uint8_t> raw(size);
    ZE_OK(zetMetricQueryGetData(q, &size, raw.data()));
    const auto v = values_of(raw);
    ASSERT_EQ(v.size(), metric_count);
    EXPECT_EQ(v[metric_index("BytesMoved")].value.ui64, 3000u);
    EXPECT_EQ(v[metric_index("DataCommands")].value.ui64, 1u);
    EXPECT_EQ(v[metric_index("StreamMarker")].value.ui64, 0u);  // the streamers' metric
    // The experimental form: one set holding the same values.
    uint32_t sets = 0, total = 0;
    ZE_OK(zetMetricGroupCalculateMultipleMetricValuesExp(util, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES,
                                                         raw.size(), raw.data(), &sets, &total, nullptr, nullptr));
    EXPECT_EQ(sets, 1u);
    EXPECT_EQ(total, metric_count);
    // The query outlives its pool's handle; each handle is destroyed once.
    ZE_OK(zetMetricQueryPoolDestroy(pool));
    EXPECT_EQ(zetMetricQueryPoolDestroy(pool), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zetMetricQueryReset(q));
    EXPECT_EQ(zetMetricQueryGetData(q, &size, nullptr), ZE_RESULT_NOT_READY);
    ZE_OK(zetMetricQueryDestroy(q));
    EXPECT_EQ(zetMetricQueryDestroy(q), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zetMetricQueryGetData(q, &size, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zetCommandListAppendMetricQueryBegin(l, q), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListDestroy(l), ZE_RESULT_SUCCESS);
}

TEST_F(ZeMetricSampling, QueryInARegularListRunsWhenTheListRuns) {
    zet_metric_query_pool_desc_t pd{ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC, nullptr,
                                    ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, 1};
    zet_metric_query_pool_handle_t pool = nullptr;
    ZE_OK(zetMetricQueryPoolCreate(context, device, util, &pd, &pool));
    zet_metric_query_handle_t q = nullptr;
    ZE_OK(zetMetricQueryCreate(pool, 0, &q));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t l = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &l));
    ZE_OK(zetCommandListAppendMetricQueryBegin(l, q));
    ZE_OK(zeCommandListAppendMemoryFill(l, dev, "\x7f", 1, 512, nullptr, 0, nullptr));
    ZE_OK(zetCommandListAppendMetricQueryEnd(l, q, nullptr, 0, nullptr));
    ZE_OK(zeCommandListClose(l));
    size_t size = 0;
    EXPECT_EQ(zetMetricQueryGetData(q, &size, nullptr), ZE_RESULT_NOT_READY);  // recorded, not run
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &l, nullptr));
    ZE_OK(zeCommandQueueSynchronize(queue, kForever));
    ZE_OK(zetMetricQueryGetData(q, &size, nullptr));
    std::vector<uint8_t> raw(size);
    ZE_OK(zetMetricQueryGetData(q, &size, raw.data()));
    EXPECT_EQ(values_of(raw)[metric_index("BytesMoved")].value.ui64, 512u);
    ZE_OK(zeCommandQueueDestroy(queue));
    ZE_OK(zeCommandListDestroy(l));
    ZE_OK(zetMetricQueryDestroy(q));
    ZE_OK(zetMetricQueryPoolDestroy(pool));
}

TEST_F(ZeMetricSampling, BadInputGetsAClearError) {
    zet_metric_query_pool_desc_t pd{ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC, nullptr,
                                    ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, 0};
    zet_metric_query_pool_handle_t pool = nullptr;
    EXPECT_EQ(zetMetricQueryPoolCreate(context, device, util, &pd, &pool), ZE_RESULT_ERROR_INVALID_SIZE);
    pd.count = 1;
    pd.type = static_cast<zet_metric_query_pool_type_t>(7);
    EXPECT_EQ(zetMetricQueryPoolCreate(context, device, util, &pd, &pool), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    pd.type = ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE;
    EXPECT_EQ(zetMetricQueryPoolCreate(context, device, engine, &pd, &pool), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zetMetricQueryPoolCreate(context, device, util, nullptr, &pool), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ZE_OK(zetMetricQueryPoolCreate(context, device, util, &pd, &pool));
    zet_metric_query_handle_t q = nullptr;
    EXPECT_EQ(zetMetricQueryCreate(pool, 1, &q), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zetMetricQueryCreate(pool, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ZE_OK(zetMetricQueryCreate(pool, 0, &q));
    EXPECT_EQ(zetMetricQueryGetData(q, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zetCommandListAppendMetricQueryBegin(nullptr, q), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zetCommandListAppendMetricMemoryBarrier(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    uint32_t n = 0;
    const uint8_t junk[64] = {1, 2, 3};
    EXPECT_EQ(zetMetricGroupCalculateMetricValues(util, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 0, junk, &n,
                                                  nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(zetMetricGroupCalculateMetricValues(util, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 64, nullptr,
                                                  &n, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zetMetricGroupCalculateMetricValues(util, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, 64, junk,
                                                  nullptr, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zetMetricGroupCalculateMetricValues(util, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, sizeof junk,
                                                  junk, &n, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zetMetricGroupCalculateMetricValues(nullptr, ZET_METRIC_GROUP_CALCULATION_TYPE_METRIC_VALUES, sizeof junk,
                                                  junk, &n, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zetMetricQueryDestroy(q));
    ZE_OK(zetMetricQueryPoolDestroy(pool));
}

TEST_F(ZeMetricSampling, QueriesFromManyThreads) {
    zet_metric_query_pool_desc_t pd{ZET_STRUCTURE_TYPE_METRIC_QUERY_POOL_DESC, nullptr,
                                    ZET_METRIC_QUERY_POOL_TYPE_PERFORMANCE, 8};
    zet_metric_query_pool_handle_t pool = nullptr;
    ZE_OK(zetMetricQueryPoolCreate(context, device, util, &pd, &pool));
    // Each thread's list and event are made here: the fixture's bookkeeping is not for threads.
    std::vector<ze_command_list_handle_t> lists;
    std::vector<ze_event_handle_t> events;
    for (uint32_t t = 0; t < 4; ++t) {
        lists.push_back(immediate_list(1));
        events.push_back(make_events(1)[0]);
    }
    std::vector<std::thread> threads;
    std::atomic<int> ok{0};
    for (uint32_t t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            ze_command_list_handle_t l = lists[t];
            ze_event_handle_t done = events[t];
            for (int i = 0; i < 20; ++i) {
                zet_metric_query_handle_t q = nullptr;
                if (zetMetricQueryCreate(pool, t, &q) != ZE_RESULT_SUCCESS) continue;
                EXPECT_EQ(zetCommandListAppendMetricQueryBegin(l, q), ZE_RESULT_SUCCESS);
                EXPECT_EQ(zetCommandListAppendMetricQueryEnd(l, q, done, 0, nullptr), ZE_RESULT_SUCCESS);
                EXPECT_EQ(zeEventHostSynchronize(done, kForever), ZE_RESULT_SUCCESS);
                EXPECT_EQ(zeEventHostReset(done), ZE_RESULT_SUCCESS);
                size_t size = 0;
                if (zetMetricQueryGetData(q, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) ++ok;
                EXPECT_EQ(zetMetricQueryDestroy(q), ZE_RESULT_SUCCESS);
            }
            EXPECT_EQ(zeCommandListDestroy(l), ZE_RESULT_SUCCESS);
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(ok.load(), 80);
    ZE_OK(zetMetricQueryPoolDestroy(pool));
}

// A wait that never hangs a test.
constexpr uint64_t kTenSeconds = 10'000'000'000u;

// A notification event of a pool made for both sim devices serves the streamer and the
// tracer of the device whose HAL pool it is not (CTest runs this file with two sim devices);
// one of a pool made for the other device alone is refused.
TEST_F(ZeMetricSampling, NotificationEventOfAPoolMadeForSeveralDevices) {
    if (devices.size() < 2 || !is_sim(devices[devices.size() - 2])) GTEST_SKIP() << "two sim devices needed";
    ze_device_handle_t other = devices[devices.size() - 2];
    // The pool of both lies on `other`, the first device named.
    const ze_event_handle_t shared = make_events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, {other, device})[0];
    const ze_event_handle_t foreign = make_events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, {other})[0];

    zet_metric_streamer_desc_t desc{ZET_STRUCTURE_TYPE_METRIC_STREAMER_DESC, nullptr, 1, 100000};
    zet_metric_streamer_handle_t s = nullptr;
    EXPECT_EQ(zetMetricStreamerOpen(context, device, util, &desc, foreign, &s), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zetMetricStreamerOpen(context, device, util, &desc, shared, &s));
    EXPECT_EQ(zeEventHostSynchronize(shared, kTenSeconds), ZE_RESULT_SUCCESS);
    ZE_OK(zetMetricStreamerClose(s));

    auto create = extension<decltype(&zetMetricTracerCreateExp)>(driver, "zetMetricTracerCreateExp");
    auto destroy = extension<decltype(&zetMetricTracerDestroyExp)>(driver, "zetMetricTracerDestroyExp");
    auto enable = extension<decltype(&zetMetricTracerEnableExp)>(driver, "zetMetricTracerEnableExp");
    auto disable = extension<decltype(&zetMetricTracerDisableExp)>(driver, "zetMetricTracerDisableExp");
    ASSERT_TRUE(create && destroy && enable && disable);
    ZE_OK(zeEventHostReset(shared));
    ZE_OK(zetContextActivateMetricGroups(context, device, 1, &engine));
    zet_metric_tracer_exp_desc_t td{static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_TRACER_EXP_DESC), nullptr, 1};
    zet_metric_tracer_exp_handle_t t = nullptr;
    EXPECT_EQ(create(context, device, 1, &engine, &td, foreign, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(create(context, device, 1, &engine, &td, shared, &t));
    ZE_OK(enable(t, 1));  // its enable marker is a record: the event fires
    EXPECT_EQ(zeEventHostSynchronize(shared, kTenSeconds), ZE_RESULT_SUCCESS);
    ZE_OK(disable(t, 1));
    ZE_OK(destroy(t));
}

// Each group names its source (zet_metric_source_id_exp_t): the sim device's four groups are
// four sources (commands' events, asynchronous events, export memory, sampled counters).
TEST_F(ZeMetricSampling, EachGroupNamesItsSource) {
    uint32_t n = 0;
    ZE_OK(zetMetricGroupGet(device, &n, nullptr));
    std::vector<zet_metric_group_handle_t> groups(n);
    ZE_OK(zetMetricGroupGet(device, &n, groups.data()));
    std::set<uint32_t> sources;
    for (zet_metric_group_handle_t g : groups) {
        zet_metric_source_id_exp_t source{static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_SOURCE_ID_EXP), nullptr,
                                          UINT32_MAX};
        zet_metric_group_type_exp_t type{static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_GROUP_TYPE_EXP), &source,
                                         0};
        zet_metric_group_properties_t p{};
        p.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
        p.pNext = &type;
        ZE_OK(zetMetricGroupGetProperties(g, &p));
        EXPECT_NE(type.type, 0u) << p.name;
        EXPECT_NE(source.sourceId, UINT32_MAX) << p.name;
        sources.insert(source.sourceId);
    }
    EXPECT_EQ(sources.size(), groups.size()) << "two groups of one source";
    if (is_sim(device)) {
        EXPECT_EQ(sources.size(), 4u);
    }
}

}  // namespace
}  // namespace zetest
