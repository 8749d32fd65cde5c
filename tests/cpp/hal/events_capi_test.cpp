// The C API of zehal/events.h.
#include "zehal/events.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "hal/device_handle.hpp"
#include "hal/event_handle.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

struct CApi : ::testing::Test {
    hal::DeviceRef device = test::sim_device();
    zehal_device_t handle = capi::handle_from_device(device.get());
};

TEST_F(CApi, DeviceHandleRoundTrip) {
    EXPECT_EQ(capi::device_from_handle(handle), device.get());
    EXPECT_EQ(capi::device_from_handle(nullptr), nullptr);
}

TEST_F(CApi, TimestampPropertiesAndGlobalTimestamps) {
    zehal_device_timestamp_properties_t p{};
    ASSERT_EQ(zehal_device_get_timestamp_properties(handle, &p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(p.flags,
              ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_KERNEL | ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_SYNCHRONIZED);
    EXPECT_EQ(p.timer_resolution_hz, 19'200'000u);
    EXPECT_EQ(p.kernel_timestamp_valid_bits, 32u);
    EXPECT_EQ(p.timestamp_valid_bits, 64u);
    EXPECT_EQ(zehal_device_get_timestamp_properties(nullptr, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_get_timestamp_properties(handle, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    uint64_t host = 0;
    uint64_t ticks = 0;
    const uint64_t before = host_now_ns();
    ASSERT_EQ(zehal_device_get_global_timestamps(handle, &host, &ticks), ZE_RESULT_SUCCESS);
    EXPECT_GE(host, before);
    EXPECT_EQ(zehal_device_get_global_timestamps(nullptr, &host, &ticks), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_get_global_timestamps(handle, nullptr, &ticks), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(CApi, PoolAndEventLifecycle) {
    zehal_event_pool_t pool = nullptr;
    EXPECT_EQ(zehal_event_pool_create(nullptr, 0, 1, &pool), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_pool_create(handle, 0, 1, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_event_pool_create(handle, 0, 0, &pool), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(zehal_event_pool_create(handle, 1u << 7, 1, &pool), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    ASSERT_EQ(zehal_event_pool_create(handle, ZEHAL_EVENT_POOL_FLAG_HOST_VISIBLE, 2, &pool), ZE_RESULT_SUCCESS);
    zehal_event_t event = nullptr;
    EXPECT_EQ(zehal_event_create(nullptr, 0, &event), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_create(pool, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_event_create(pool, 2, &event), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(zehal_event_create(pool, 1, &event), ZE_RESULT_SUCCESS);
    // A pool handle is not an event handle, nor the other way round.
    EXPECT_EQ(zehal_event_query_status(reinterpret_cast<zehal_event_t>(pool)), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_pool_destroy(reinterpret_cast<zehal_event_pool_t>(event)),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    EXPECT_EQ(zehal_event_query_status(event), ZE_RESULT_NOT_READY);
    EXPECT_EQ(zehal_event_host_synchronize(event, 0), ZE_RESULT_NOT_READY);
    EXPECT_EQ(zehal_event_host_synchronize(event, 1'000'000), ZE_RESULT_NOT_READY);
    EXPECT_EQ(zehal_event_host_signal(event), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_query_status(event), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_host_synchronize(event, ZEHAL_TIMEOUT_INFINITE), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_host_reset(event), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_query_status(event), ZE_RESULT_NOT_READY);

    // The handle maps to the HAL event and pool.
    hal::EventRef e = capi::event_from_handle(event);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(&e->pool(), capi::event_pool_from_handle(pool).get());

    // The pool is in use while an event handle lives.
    EXPECT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    EXPECT_EQ(zehal_event_destroy(event), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_destroy(event), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_destroy(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // Use after destroy.
    EXPECT_EQ(zehal_event_query_status(event), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_host_signal(event), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_host_reset(event), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_host_synchronize(event, 0), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(capi::event_from_handle(event), nullptr);
    EXPECT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_pool_destroy(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_create(pool, 0, &event), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // The HAL event taken from the handle stays usable.
    EXPECT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
}

TEST_F(CApi, KernelTimestampsExt) {
    zehal_event_pool_t pool = nullptr;
    ASSERT_EQ(zehal_event_pool_create(handle, ZEHAL_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP, 1, &pool),
              ZE_RESULT_SUCCESS);
    zehal_event_t event = nullptr;
    ASSERT_EQ(zehal_event_create(pool, 0, &event), ZE_RESULT_SUCCESS);
    zehal_kernel_timestamp_result_t ticks[2] = {};
    zehal_kernel_timestamp_result_t ns[2] = {};
    zehal_event_query_kernel_timestamps_results_t results{ticks, ns};
    uint32_t count = 1;
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, &results), ZE_RESULT_NOT_READY);
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(nullptr, &count, &results), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(event, nullptr, &results), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);

    // A command on the device signals it.
    auto q = test::queue(device);
    const uint64_t before = host_now_ns();
    ASSERT_EQ(q->append_barrier(capi::event_from_handle(event), {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_host_synchronize(event, ZEHAL_TIMEOUT_INFINITE), ZE_RESULT_SUCCESS);
    const uint64_t after = host_now_ns();
    count = 0;
    ASSERT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 1u);
    count = 2;
    ASSERT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, &results), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 1u);
    EXPECT_LE(ticks[0].global.kernel_start, ticks[0].global.kernel_end);
    EXPECT_LE(before, ns[0].global.kernel_start);
    EXPECT_LE(ns[0].global.kernel_end, after);
    EXPECT_EQ(ns[0].context.kernel_start, ns[0].global.kernel_start);
    // One side only.
    zehal_kernel_timestamp_result_t only[1] = {};
    zehal_event_query_kernel_timestamps_results_t sync_only{nullptr, only};
    count = 1;
    ASSERT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, &sync_only), ZE_RESULT_SUCCESS);
    EXPECT_EQ(only[0].global.kernel_start, ns[0].global.kernel_start);
    zehal_event_query_kernel_timestamps_results_t none{nullptr, nullptr};
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, &none), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(zehal_event_destroy(event), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);

    // A kernel-only pool answers synchronized queries with UNSUPPORTED_FEATURE, writing nothing.
    ASSERT_EQ(zehal_event_pool_create(handle, ZEHAL_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1, &pool), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_create(pool, 0, &event), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_host_signal(event), ZE_RESULT_SUCCESS);
    ticks[0] = {};
    count = 1;
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, &results), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(ticks[0].global.kernel_end, 0u);
    zehal_event_query_kernel_timestamps_results_t ticks_only{ticks, nullptr};
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, &ticks_only), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_destroy(event), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);

    // A pool without timestamps.
    ASSERT_EQ(zehal_event_pool_create(handle, 0, 1, &pool), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_create(pool, 0, &event), ZE_RESULT_SUCCESS);
    count = 0;
    EXPECT_EQ(zehal_event_query_kernel_timestamps_ext(event, &count, nullptr), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    ASSERT_EQ(zehal_event_destroy(event), ZE_RESULT_SUCCESS);
    ASSERT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);
}

TEST_F(CApi, LostDevice) {
    zehal_event_pool_t pool = nullptr;
    ASSERT_EQ(zehal_event_pool_create(handle, 0, 1, &pool), ZE_RESULT_SUCCESS);
    zehal_event_t event = nullptr;
    ASSERT_EQ(zehal_event_create(pool, 0, &event), ZE_RESULT_SUCCESS);
    ASSERT_EQ(device->lose(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_query_status(event), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(zehal_event_host_synchronize(event, ZEHAL_TIMEOUT_INFINITE), ZE_RESULT_ERROR_DEVICE_LOST);
    zehal_event_pool_t other = nullptr;
    EXPECT_EQ(zehal_event_pool_create(handle, 0, 1, &other), ZE_RESULT_ERROR_DEVICE_LOST);
    uint64_t h = 0;
    uint64_t t = 0;
    EXPECT_EQ(zehal_device_get_global_timestamps(handle, &h, &t), ZE_RESULT_ERROR_DEVICE_LOST);
    // Handles are still released.
    EXPECT_EQ(zehal_event_destroy(event), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);
}

// Handles made and destroyed by several threads, with waits in between.
TEST_F(CApi, Threads) {
    zehal_event_pool_t pool = nullptr;
    ASSERT_EQ(zehal_event_pool_create(handle, 0, 4, &pool), ZE_RESULT_SUCCESS);
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 4; ++t)
        threads.emplace_back([&, t] {
            for (int i = 0; i < 500; ++i) {
                zehal_event_t e = nullptr;
                ASSERT_EQ(zehal_event_create(pool, t, &e), ZE_RESULT_SUCCESS);
                ASSERT_EQ(zehal_event_host_signal(e), ZE_RESULT_SUCCESS);
                ASSERT_EQ(zehal_event_host_synchronize(e, ZEHAL_TIMEOUT_INFINITE), ZE_RESULT_SUCCESS);
                ASSERT_EQ(zehal_event_host_reset(e), ZE_RESULT_SUCCESS);
                ASSERT_EQ(zehal_event_destroy(e), ZE_RESULT_SUCCESS);
            }
        });
    for (auto& t : threads) t.join();
    EXPECT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zehal
