// The metrics C API (zehal/metrics.h): counts, properties, every error code, handles
// after destroy, export, the notification event, and a round trip written in C11.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>
#include <vector>

#include "hal/device_handle.hpp"
#include "metrics_test_util.hpp"
#include "zehal/events.h"
#include "zehal/metrics.h"

extern "C" int zehal_metrics_c11_round_trip(zehal_device_t device);

namespace zehal::metrics::test {
namespace {

class MetricsCApi : public ::testing::Test {
protected:
    void SetUp() override {
        device_ = make_device(quiet());
        handle_ = capi::handle_from_device(device_.get());
        uint32_t count = 0;
        ASSERT_EQ(zehal_metric_group_get(handle_, &count, nullptr), ZE_RESULT_SUCCESS);
        groups_.resize(count);
        ASSERT_EQ(zehal_metric_group_get(handle_, &count, groups_.data()), ZE_RESULT_SUCCESS);
    }
    zehal_metric_group_t group(const char* name) {
        for (auto g : groups_) {
            zehal_metric_group_properties_t p;
            EXPECT_EQ(zehal_metric_group_get_properties(g, &p), ZE_RESULT_SUCCESS);
            if (std::strcmp(p.name, name) == 0) return g;
        }
        ADD_FAILURE() << name;
        return nullptr;
    }
    zehal_metric_tracer_t tracer(const char* name, zehal_event_t event = nullptr) {
        zehal_metric_group_t g = group(name);
        EXPECT_EQ(zehal_device_activate_metric_groups(handle_, 1, &g), ZE_RESULT_SUCCESS);
        uint32_t notify = 0;
        zehal_metric_tracer_t t = nullptr;
        EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &g, &notify, event, &t), ZE_RESULT_SUCCESS);
        return t;
    }
    hal::DeviceRef device_;
    zehal_device_t handle_ = nullptr;
    std::vector<zehal_metric_group_t> groups_;
};

TEST_F(MetricsCApi, GroupsAndMetricsWithTheirProperties) {
    ASSERT_EQ(groups_.size(), device_->metric_groups().size());
    uint32_t one = 1;
    zehal_metric_group_t first = nullptr;
    ASSERT_EQ(zehal_metric_group_get(handle_, &one, &first), ZE_RESULT_SUCCESS);
    EXPECT_EQ(one, 1u);
    EXPECT_EQ(first, groups_[0]);
    uint32_t many = 100;
    std::vector<zehal_metric_group_t> room(100, nullptr);
    ASSERT_EQ(zehal_metric_group_get(handle_, &many, room.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(many, groups_.size());
    EXPECT_EQ(room[groups_.size()], nullptr);

    for (size_t i = 0; i < groups_.size(); ++i) {
        const hal::MetricGroupInfo& info = device_->metric_groups()[i];
        zehal_metric_group_properties_t p;
        ASSERT_EQ(zehal_metric_group_get_properties(groups_[i], &p), ZE_RESULT_SUCCESS);
        EXPECT_EQ(info.name, p.name);
        EXPECT_EQ(info.description, p.description);
        EXPECT_EQ(info.sampling_types, p.sampling_types);
        EXPECT_EQ(info.type_flags, p.type_flags);
        EXPECT_EQ(info.metrics.size(), p.metric_count);
        uint32_t count = 0;
        ASSERT_EQ(zehal_metric_get(groups_[i], &count, nullptr), ZE_RESULT_SUCCESS);
        ASSERT_EQ(count, p.metric_count);
        std::vector<zehal_metric_t> metrics(count);
        ASSERT_EQ(zehal_metric_get(groups_[i], &count, metrics.data()), ZE_RESULT_SUCCESS);
        for (uint32_t k = 0; k < count; ++k) {
            zehal_metric_properties_t mp;
            ASSERT_EQ(zehal_metric_get_properties(metrics[k], &mp), ZE_RESULT_SUCCESS);
            EXPECT_EQ(info.metrics[k].name, mp.name);
            EXPECT_EQ(info.metrics[k].component, mp.component);
            EXPECT_EQ(info.metrics[k].units, mp.units);
            EXPECT_EQ(info.metrics[k].metric_type, mp.metric_type);
            EXPECT_EQ(info.metrics[k].result_type, mp.result_type);
        }
    }
}

TEST_F(MetricsCApi, BadHandlesAndPointers) {
    uint32_t count = 0;
    zehal_metric_group_properties_t gp;
    zehal_metric_properties_t mp;
    EXPECT_EQ(zehal_metric_group_get(nullptr, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_group_get(handle_, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    count = 2;
    EXPECT_EQ(zehal_metric_group_get(handle_, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_metric_group_get_properties(nullptr, &gp), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_group_get_properties(groups_[0], nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    int not_a_group = 0;
    auto foreign_group = reinterpret_cast<zehal_metric_group_t>(&not_a_group);
    auto foreign_metric = reinterpret_cast<zehal_metric_t>(&not_a_group);
    EXPECT_EQ(zehal_metric_group_get_properties(foreign_group, &gp), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zehal_metric_get(foreign_group, &count, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zehal_metric_get(nullptr, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_get_properties(nullptr, &mp), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_get_properties(foreign_metric, &mp), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zehal_device_activate_metric_groups(nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_activate_metric_groups(handle_, 1, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_device_activate_metric_groups(handle_, 1, &foreign_group), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zehal_device_activate_metric_groups(handle_, 0, nullptr), ZE_RESULT_SUCCESS);

    zehal_metric_group_t engine = group("EngineEvents");
    zehal_metric_tracer_t t = nullptr;
    uint32_t notify = 0;
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, &notify, nullptr, &t), ZE_RESULT_NOT_READY);
    ASSERT_EQ(zehal_device_activate_metric_groups(handle_, 1, &engine), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_metric_tracer_create(nullptr, 1, &engine, &notify, nullptr, &t),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, &notify, nullptr, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, nullptr, nullptr, &t),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, nullptr, &notify, nullptr, &t),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 0, &engine, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &foreign_group, &notify, nullptr, &t),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    zehal_metric_group_t util = group("EngineUtilization");
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &util, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);

    // Tracer and decoder handles: null, never given out, destroyed.
    uint8_t buf[64];
    size_t size = sizeof buf;
    uint64_t dropped = 0;
    auto bogus = reinterpret_cast<zehal_metric_tracer_t>(~uintptr_t{0});
    EXPECT_EQ(zehal_metric_tracer_enable(nullptr, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_enable(bogus, 1), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zehal_metric_tracer_read_data(nullptr, &size, buf), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_get_dropped(nullptr, &dropped), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_decoder_destroy(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    ASSERT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, &notify, nullptr, &t), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_metric_tracer_get_dropped(t, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_metric_tracer_read_data(t, nullptr, buf), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_metric_decoder_create(t, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    zehal_metric_tracer_t second = nullptr;
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, &notify, nullptr, &second),
              ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    ASSERT_EQ(zehal_metric_tracer_enable(t, 1), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_metric_tracer_destroy(t), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    ASSERT_EQ(zehal_metric_tracer_disable(t, 0), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_metric_tracer_destroy(t), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_metric_tracer_destroy(t), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_enable(t, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_disable(t, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_read_data(t, &size, buf), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_get_dropped(t, &dropped), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    zehal_metric_decoder_t dec = nullptr;
    EXPECT_EQ(zehal_metric_decoder_create(t, &dec), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // A new tracer never answers to the old handle.
    ASSERT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, &notify, nullptr, &second), ZE_RESULT_SUCCESS);
    EXPECT_NE(second, t);
    EXPECT_EQ(zehal_metric_tracer_enable(t, 1), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_tracer_destroy(second), ZE_RESULT_SUCCESS);
}

TEST_F(MetricsCApi, ReadAndDecodeWithSubsetsAndPartialDecoding) {
    zehal_metric_tracer_t t = tracer("EngineEvents");
    zehal_metric_decoder_t dec = nullptr;
    ASSERT_EQ(zehal_metric_decoder_create(t, &dec), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_metric_tracer_enable(t, 1), ZE_RESULT_SUCCESS);
    void* p = nullptr;
    ASSERT_EQ(device_->allocate(hal::MemoryKind::device, 1024, 64, 0, 0, &p), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(device_->create_queue(hal::kCopyOrdinal, 1, &q), ZE_RESULT_SUCCESS);
    const uint8_t pat = 1;
    for (int i = 0; i < 3; ++i) ASSERT_EQ(q->append_fill(p, &pat, 1, 1024, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_metric_tracer_disable(t, 1), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> raw;
    for (;;) {
        uint8_t buf[100];  // not a multiple of a record
        size_t size = sizeof buf;
        const ze_result_t r = zehal_metric_tracer_read_data(t, &size, buf);
        ASSERT_EQ(size % ZEHAL_METRIC_RECORD_SIZE, 0u);
        raw.insert(raw.end(), buf, buf + size);
        if (r == ZE_RESULT_NOT_READY) break;
        ASSERT_EQ(r, ZE_RESULT_SUCCESS);
    }
    ASSERT_EQ(zehal_metric_tracer_destroy(t), ZE_RESULT_SUCCESS);  // the decoder lives on

    uint32_t count = 0;
    ASSERT_EQ(zehal_metric_decoder_get_decodable_metrics(dec, &count, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(count, 8u);
    std::vector<zehal_metric_t> metrics(count);
    ASSERT_EQ(zehal_metric_decoder_get_decodable_metrics(dec, &count, metrics.data()), ZE_RESULT_SUCCESS);
    zehal_metric_properties_t mp;
    ASSERT_EQ(zehal_metric_get_properties(metrics[2], &mp), ZE_RESULT_SUCCESS);
    EXPECT_STREQ(mp.name, "BytesMoved");
    // The same handles as the group's.
    uint32_t group_count = 8;
    std::vector<zehal_metric_t> group_metrics(8);
    ASSERT_EQ(zehal_metric_get(group("EngineEvents"), &group_count, group_metrics.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(group_metrics, metrics);

    size_t size = raw.size();
    uint32_t sets = 0, entries = 0;
    zehal_metric_t bytes_moved = metrics[2];
    ASSERT_EQ(zehal_metric_tracer_decode(dec, &size, raw.data(), 1, &bytes_moved, &sets, nullptr, &entries, nullptr),
              ZE_RESULT_SUCCESS);
    EXPECT_EQ(sets, 1u);
    ASSERT_EQ(entries, 3u);
    std::vector<zehal_metric_entry_t> out(3);
    uint32_t per_set = 0;
    ASSERT_EQ(
        zehal_metric_tracer_decode(dec, &size, raw.data(), 1, &bytes_moved, &sets, &per_set, &entries, out.data()),
        ZE_RESULT_SUCCESS);
    EXPECT_EQ(per_set, 3u);
    for (auto& e : out) {
        EXPECT_EQ(e.value, 1024u);
        EXPECT_EQ(e.metric_index, 0u);
        EXPECT_EQ(e.on_subdevice, 0);
    }
    // Partial: one entry, raw bytes consumed reported.
    size = raw.size();
    entries = 1;
    ASSERT_EQ(zehal_metric_tracer_decode(dec, &size, raw.data(), 0, nullptr, &sets, nullptr, &entries, out.data()),
              ZE_RESULT_SUCCESS);
    EXPECT_EQ(entries, 1u);
    EXPECT_LT(size, raw.size());
    EXPECT_EQ(size % ZEHAL_METRIC_RECORD_SIZE, 0u);
    // Errors.
    size = 0;  // no data: no entries
    EXPECT_EQ(zehal_metric_tracer_decode(dec, &size, nullptr, 0, nullptr, &sets, nullptr, &entries, out.data()),
              ZE_RESULT_SUCCESS);
    EXPECT_EQ(entries, 0u);
    size = raw.size();
    EXPECT_EQ(zehal_metric_tracer_decode(dec, &size, raw.data(), 1, nullptr, &sets, nullptr, &entries, out.data()),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    zehal_metric_t async_metric = nullptr;
    uint32_t one = 1;
    ASSERT_EQ(zehal_metric_get(group("AsyncEvents"), &one, &async_metric), ZE_RESULT_SUCCESS);
    EXPECT_EQ(
        zehal_metric_tracer_decode(dec, &size, raw.data(), 1, &async_metric, &sets, nullptr, &entries, out.data()),
        ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const std::vector<uint8_t> truncated(raw.begin(), raw.end() - 5);
    size = truncated.size();
    sets = entries = 0;
    EXPECT_EQ(zehal_metric_tracer_decode(dec, &size, truncated.data(), 0, nullptr, &sets, nullptr, &entries, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(entries, 24u);  // every command's records are whole
    ASSERT_EQ(zehal_metric_decoder_destroy(dec), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_metric_decoder_destroy(dec), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_metric_decoder_get_decodable_metrics(dec, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(device_->free(p), ZE_RESULT_SUCCESS);
}

TEST_F(MetricsCApi, ExportDmaBuf) {
    int fd = -1;
    size_t size = 0;
    EXPECT_EQ(zehal_metric_group_get_export_dma_buf(group("EngineEvents"), &fd, &size),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zehal_metric_group_get_export_dma_buf(nullptr, &fd, &size), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    zehal_metric_group_t exp = group("ExportMemory");
    EXPECT_EQ(zehal_metric_group_get_export_dma_buf(exp, nullptr, &size), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(zehal_metric_group_get_export_dma_buf(exp, &fd, &size), ZE_RESULT_SUCCESS);
    EXPECT_GE(fd, 0);
    EXPECT_GT(size, 0u);
    uint32_t count = 0;
    ASSERT_EQ(zehal_metric_get(exp, &count, nullptr), ZE_RESULT_SUCCESS);
    std::vector<zehal_metric_t> metrics(count);
    ASSERT_EQ(zehal_metric_get(exp, &count, metrics.data()), ZE_RESULT_SUCCESS);
    int found = 0;
    for (auto m : metrics) {
        zehal_metric_properties_t p;
        ASSERT_EQ(zehal_metric_get_properties(m, &p), ZE_RESULT_SUCCESS);
        int mfd = -1;
        size_t msize = 0;
        if (p.metric_type == ZEHAL_METRIC_TYPE_EXP_EXPORT_DMA_BUF) {
            ASSERT_EQ(zehal_metric_get_export_dma_buf(m, &mfd, &msize), ZE_RESULT_SUCCESS);
            EXPECT_EQ(mfd, fd);
            EXPECT_EQ(msize, size);
            ++found;
        } else {
            EXPECT_EQ(zehal_metric_get_export_dma_buf(m, &mfd, &msize), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
    }
    EXPECT_EQ(found, 1);
}

TEST_F(MetricsCApi, NotificationEventFromTheEventsApi) {
    zehal_event_pool_t hidden_pool = nullptr, pool = nullptr;
    ASSERT_EQ(zehal_event_pool_create(handle_, 0, 1, &hidden_pool), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_pool_create(handle_, ZEHAL_EVENT_POOL_FLAG_HOST_VISIBLE, 1, &pool), ZE_RESULT_SUCCESS);
    zehal_event_t hidden = nullptr, event = nullptr;
    ASSERT_EQ(zehal_event_create(hidden_pool, 0, &hidden), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_create(pool, 0, &event), ZE_RESULT_SUCCESS);
    zehal_metric_group_t engine = group("EngineEvents");
    ASSERT_EQ(zehal_device_activate_metric_groups(handle_, 1, &engine), ZE_RESULT_SUCCESS);
    uint32_t notify = 64;
    zehal_metric_tracer_t t = nullptr;
    EXPECT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, &notify, hidden, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(zehal_metric_tracer_create(handle_, 1, &engine, &notify, event, &t), ZE_RESULT_SUCCESS);
    EXPECT_EQ(notify, 64u);
    EXPECT_EQ(zehal_event_query_status(event), ZE_RESULT_NOT_READY);
    ASSERT_EQ(zehal_metric_tracer_enable(t, 1), ZE_RESULT_SUCCESS);  // clock sync + enable: 64 bytes
    ASSERT_EQ(zehal_event_host_synchronize(event, 10'000'000'000ull), ZE_RESULT_SUCCESS);
    size_t size = 0;
    ASSERT_EQ(zehal_metric_tracer_read_data(t, &size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_GE(size, 64u);
    ASSERT_EQ(zehal_metric_tracer_disable(t, 1), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_metric_tracer_destroy(t), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_destroy(event), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_destroy(hidden), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_pool_destroy(hidden_pool), ZE_RESULT_SUCCESS);
}

TEST_F(MetricsCApi, ThreadsOnOneTracerHandle) {
    zehal_metric_tracer_t t = tracer("EngineEvents");
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i) {
        threads.emplace_back([&, i] {
            uint8_t buf[256];
            for (int k = 0; k < 200; ++k) {
                if (i == 0) {
                    EXPECT_EQ(zehal_metric_tracer_enable(t, k % 2), ZE_RESULT_SUCCESS);
                    EXPECT_EQ(zehal_metric_tracer_disable(t, k % 3 == 0), ZE_RESULT_SUCCESS);
                } else {
                    size_t size = sizeof buf;
                    const ze_result_t r = zehal_metric_tracer_read_data(t, &size, buf);
                    EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_NOT_READY) << r;
                    EXPECT_EQ(size % ZEHAL_METRIC_RECORD_SIZE, 0u);
                }
            }
        });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(zehal_metric_tracer_disable(t, 1), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_metric_tracer_destroy(t), ZE_RESULT_SUCCESS);
}

TEST(MetricsCApiC11, RoundTripWrittenInC) {
    auto d = make_device(quiet());
    EXPECT_EQ(zehal_metrics_c11_round_trip(capi::handle_from_device(d.get())), 0);
}

}  // namespace
}  // namespace zehal::metrics::test
