// No exception crosses the C API: for each family (device, events, metrics, AML), every
// allocation a call makes is made to fail in turn; the call answers out-of-memory
// (ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, or -AML_ENOMEM) and the next try succeeds.
#include <gtest/gtest.h>

#include <aml.h>
#include <aml/area/ze.h>
#include <aml/dma/ze.h>
#include <aml/layout/dense.h>
#include <zehal/device.h>
#include <zehal/events.h>
#include <zehal/metrics.h>

#include <functional>
#include <vector>

#include "failing_new.hpp"

namespace {

using zehal::test::fail_allocation;
using zehal::test::failure_pending;

// Calls `call` with its n-th allocation failing, n = 0, 1, ..., until a call makes fewer
// allocations than n. Each failed call must answer `oom`; `undo` releases what a
// successful call made. Returns how many allocation points were exercised.
int fail_each_allocation(const std::function<int()>& call, int oom, const std::function<void()>& undo) {
    for (long n = 0;; ++n) {
        fail_allocation(n);
        const int r = call();
        const bool reached = !failure_pending();
        fail_allocation(-1);
        if (!reached) {
            EXPECT_EQ(r, 0) << "the call failed without an allocation failure";
            undo();
            return static_cast<int>(n);
        }
        if (r == 0) {
            undo();  // the failure was absorbed inside (a cache, a retry): also fine
            continue;
        }
        EXPECT_EQ(r, oom) << "allocation " << n << " failed";
    }
}

zehal_device_t sim_device() {
    zehal_device_t d = nullptr;
    EXPECT_EQ(zehal_device_get("sim", 0, &d), ZE_RESULT_SUCCESS);
    return d;
}

// The backends are probed once before any allocation is made to fail: probing opens foreign
// libraries (the Level Zero loader, CUDA's driver) whose constructors do not survive a
// failing operator new. zehal's own calls are what these tests hold to the rule.
class ProbedBackends : public ::testing::Environment {
public:
    void SetUp() override { sim_device(); }
};
const auto* const probed = ::testing::AddGlobalTestEnvironment(new ProbedBackends);

TEST(CBoundary, DeviceFamily) {
    zehal_device_t d = nullptr;
    fail_each_allocation([&] { return static_cast<int>(zehal_device_get("sim", 0, &d)); },
                         ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [] {});
    EXPECT_NE(d, nullptr);
    uint32_t n = 0;
    fail_each_allocation([&] { return static_cast<int>(zehal_device_count("sim", &n)); },
                         ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [] {});
    zehal_device_properties_t p{};
    fail_each_allocation([&] { return static_cast<int>(zehal_device_get_properties(d, &p)); },
                         ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [] {});
    zehal_backend_properties_t backends[3]{};
    fail_each_allocation(
        [&] {
            uint32_t count = 3;
            return static_cast<int>(zehal_backend_get(&count, backends));
        },
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [] {});
    char name[ZEHAL_MAX_BACKEND_NAME];
    fail_each_allocation([&] { return static_cast<int>(zehal_backend_get_default(name)); },
                         ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [] {});
}

TEST(CBoundary, EventsFamily) {
    zehal_device_t d = sim_device();
    zehal_event_pool_t pool = nullptr;
    const int points = fail_each_allocation(
        [&] {
            return static_cast<int>(zehal_event_pool_create(
                d, ZEHAL_EVENT_POOL_FLAG_HOST_VISIBLE | ZEHAL_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 4, &pool));
        },
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [&] { EXPECT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS); });
    EXPECT_GT(points, 0);
    ASSERT_EQ(zehal_event_pool_create(d, ZEHAL_EVENT_POOL_FLAG_HOST_VISIBLE, 4, &pool), ZE_RESULT_SUCCESS);
    zehal_event_t event = nullptr;
    fail_each_allocation([&] { return static_cast<int>(zehal_event_create(pool, 1, &event)); },
                         ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY,
                         [&] { EXPECT_EQ(zehal_event_destroy(event), ZE_RESULT_SUCCESS); });
    EXPECT_EQ(zehal_event_pool_destroy(pool), ZE_RESULT_SUCCESS);
}

TEST(CBoundary, MetricsFamily) {
    zehal_device_t d = sim_device();
    uint32_t count = 0;
    ASSERT_EQ(zehal_metric_group_get(d, &count, nullptr), ZE_RESULT_SUCCESS);
    std::vector<zehal_metric_group_t> groups(count);
    fail_each_allocation([&] { return static_cast<int>(zehal_metric_group_get(d, &count, groups.data())); },
                         ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [] {});
    zehal_metric_group_t tracer_group = nullptr;
    for (zehal_metric_group_t g : groups) {
        zehal_metric_group_properties_t p{};
        ASSERT_EQ(zehal_metric_group_get_properties(g, &p), ZE_RESULT_SUCCESS);
        if (p.sampling_types & ZEHAL_METRIC_SAMPLING_TYPE_TRACER_BASED) tracer_group = g;
    }
    ASSERT_NE(tracer_group, nullptr);
    ASSERT_EQ(zehal_device_activate_metric_groups(d, 1, &tracer_group), ZE_RESULT_SUCCESS);
    uint32_t notify = 0;
    zehal_metric_tracer_t tracer = nullptr;
    const int points = fail_each_allocation(
        [&] { return static_cast<int>(zehal_metric_tracer_create(d, 1, &tracer_group, &notify, nullptr, &tracer)); },
        ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, [&] { EXPECT_EQ(zehal_metric_tracer_destroy(tracer), ZE_RESULT_SUCCESS); });
    EXPECT_GT(points, 0);
    // The call that used to abort the process: a group count whose arrays cannot be made.
    std::vector<zehal_metric_group_t> many(16, tracer_group);
    fail_allocation(0);
    EXPECT_EQ(zehal_metric_tracer_create(d, 0xFFFFFFFFu, many.data(), &notify, nullptr, &tracer),
              ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    fail_allocation(-1);
    ASSERT_EQ(zehal_metric_tracer_create(d, 1, &tracer_group, &notify, nullptr, &tracer), ZE_RESULT_SUCCESS);
    zehal_metric_decoder_t decoder = nullptr;
    fail_each_allocation([&] { return static_cast<int>(zehal_metric_decoder_create(tracer, &decoder)); },
                         ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY,
                         [&] { EXPECT_EQ(zehal_metric_decoder_destroy(decoder), ZE_RESULT_SUCCESS); });
    EXPECT_EQ(zehal_metric_tracer_destroy(tracer), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zehal_device_activate_metric_groups(d, 0, nullptr), ZE_RESULT_SUCCESS);
}

TEST(CBoundary, AmlFamily) {
    zehal_device_t d = sim_device();
    struct aml_area* area = nullptr;
    fail_each_allocation([&] { return aml_area_ze_host_create(&area, 0, 64); }, -AML_ENOMEM,
                         [&] { aml_area_ze_destroy(&area); });
    ASSERT_EQ(aml_area_ze_device_create(&area, d, 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    void* p = nullptr;
    fail_each_allocation(
        [&] {
            p = aml_area_mmap(area, 4096, nullptr);
            return p ? AML_SUCCESS : -aml_errno;
        },
        -AML_ENOMEM, [&] { EXPECT_EQ(aml_area_munmap(area, p, 4096), AML_SUCCESS); });
    aml_area_ze_destroy(&area);

    static char bytes[64];
    const size_t dims[] = {64};
    struct aml_layout* layout = nullptr;
    fail_each_allocation(
        [&] {
            return aml_layout_dense_create(&layout, bytes, AML_LAYOUT_ORDER_ROW_MAJOR, 1, 1, dims, nullptr, nullptr);
        },
        -AML_ENOMEM, [&] { aml_layout_destroy(&layout); });

    struct aml_dma* dma = nullptr;
    fail_each_allocation([&] { return aml_dma_ze_create(&dma, d, 1, 0); }, -AML_ENOMEM,
                         [&] { EXPECT_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS); });
}

}  // namespace
