// Handles of one kind are no handles of another (SEMANTICS §9): every function refuses a
// live handle of any other kind with INVALID_NULL_HANDLE and changes nothing — a destroy
// destroys nothing, a signal signals nothing.
#include <functional>
#include <string>

#include "first_metric_group.hpp"
#include "ze_fixture.hpp"

namespace zetest {
namespace {

// One kind of handle: a live one, and a call that uses a handle as that kind without
// changing the object (its result is INVALID_NULL_HANDLE exactly when the handle is refused).
struct Kind {
    std::string name;
    void* live;
    std::function<ze_result_t(void*)> use;
};

class HandleKindsTest : public ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
        ze_fence_desc_t fd{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
        ZE_OK(zeFenceCreate(queue, &fd, &fence));
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 2};
        ZE_OK(zeEventPoolCreate(context, &pd, 1, &device, &pool));
        ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
        ZE_OK(zeEventCreate(pool, &ed, &event));
        look_up_extensions();
        if (!first_metric_group(devices, &metric_device, &group)) return;  // no metric kinds to check
        uint32_t n = 1;
        ZE_OK(zetMetricGet(group, &n, &metric));
        make_tracer();
    }

    void TearDown() override {
        if (decoder) {
            EXPECT_EQ(decoder_destroy(decoder), ZE_RESULT_SUCCESS);
        }
        if (tracer) {
            EXPECT_EQ(tracer_destroy(tracer), ZE_RESULT_SUCCESS);
            EXPECT_EQ(zetContextActivateMetricGroups(context, metric_device, 0, nullptr), ZE_RESULT_SUCCESS);
        }
        EXPECT_EQ(zeEventDestroy(event), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeEventPoolDestroy(pool), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeFenceDestroy(fence), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeCommandQueueDestroy(queue), ZE_RESULT_SUCCESS);
        ZeDriver::TearDown();
    }

    // The tracer and decoder functions (extensions for every loader).
    void look_up_extensions() {
        tracer_destroy = extension<decltype(&zetMetricTracerDestroyExp)>(driver, "zetMetricTracerDestroyExp");
        decoder_destroy = extension<decltype(&zetMetricDecoderDestroyExp)>(driver, "zetMetricDecoderDestroyExp");
        tracer_read = extension<decltype(&zetMetricTracerReadDataExp)>(driver, "zetMetricTracerReadDataExp");
        decodable = extension<decltype(&zetMetricDecoderGetDecodableMetricsExp)>(
            driver, "zetMetricDecoderGetDecodableMetricsExp");
        ASSERT_TRUE(tracer_destroy && decoder_destroy && tracer_read && decodable);
    }

    // A tracer and a decoder of the metric group, where its device traces it.
    void make_tracer() {
        auto create = extension<decltype(&zetMetricTracerCreateExp)>(driver, "zetMetricTracerCreateExp");
        auto decoder_create = extension<decltype(&zetMetricDecoderCreateExp)>(driver, "zetMetricDecoderCreateExp");
        ASSERT_TRUE(create && decoder_create);
        ZE_OK(zetContextActivateMetricGroups(context, metric_device, 1, &group));
        zet_metric_tracer_exp_desc_t desc{static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_TRACER_EXP_DESC),
                                          nullptr, 0};
        if (create(context, metric_device, 1, &group, &desc, nullptr, &tracer) != ZE_RESULT_SUCCESS) {
            tracer = nullptr;  // not a tracer group on this device: the other kinds are still checked
            ZE_OK(zetContextActivateMetricGroups(context, metric_device, 0, nullptr));
            return;
        }
        ZE_OK(decoder_create(tracer, &decoder));
    }

    // Every kind with a live handle of it.
    std::vector<Kind> kinds() {
        std::vector<Kind> out = {
            {"driver", driver,
             [](void* h) {
                 ze_api_version_t v{};
                 return zeDriverGetApiVersion(static_cast<ze_driver_handle_t>(h), &v);
             }},
            {"device", device, [](void* h) { return zeDeviceGetStatus(static_cast<ze_device_handle_t>(h)); }},
            {"context", context, [](void* h) { return zeContextGetStatus(static_cast<ze_context_handle_t>(h)); }},
            {"event pool", pool,
             [](void* h) {
                 ze_event_handle_t e = nullptr;
                 return zeEventCreate(static_cast<ze_event_pool_handle_t>(h), nullptr, &e);
             }},
            {"event", event, [](void* h) { return zeEventQueryStatus(static_cast<ze_event_handle_t>(h)); }},
            {"queue", queue,
             [](void* h) { return zeCommandQueueSynchronize(static_cast<ze_command_queue_handle_t>(h), 0); }},
            {"command list", list,
             [](void* h) {
                 return zeCommandListAppendWaitOnEvents(static_cast<ze_command_list_handle_t>(h), 0, nullptr);
             }},
            {"fence", fence, [](void* h) { return zeFenceQueryStatus(static_cast<ze_fence_handle_t>(h)); }},
        };
        if (group) {
            out.push_back({"metric group", group, [](void* h) {
                               return zetMetricGroupGetProperties(static_cast<zet_metric_group_handle_t>(h), nullptr);
                           }});
            out.push_back({"metric", metric, [](void* h) {
                               return zetMetricGetProperties(static_cast<zet_metric_handle_t>(h), nullptr);
                           }});
        }
        if (tracer) {
            out.push_back({"tracer", tracer, [read = tracer_read](void* h) {
                               size_t size = 0;
                               return read(static_cast<zet_metric_tracer_exp_handle_t>(h), &size, nullptr);
                           }});
            out.push_back({"decoder", decoder, [get = decodable](void* h) {
                               uint32_t count = 0;
                               return get(static_cast<zet_metric_decoder_exp_handle_t>(h), &count, nullptr);
                           }});
        }
        return out;
    }

    // Every kind's destroy function, by the kind's name.
    std::vector<std::pair<std::string, std::function<ze_result_t(void*)>>> destroyers() {
        std::vector<std::pair<std::string, std::function<ze_result_t(void*)>>> out = {
            {"context", [](void* h) { return zeContextDestroy(static_cast<ze_context_handle_t>(h)); }},
            {"event pool", [](void* h) { return zeEventPoolDestroy(static_cast<ze_event_pool_handle_t>(h)); }},
            {"event", [](void* h) { return zeEventDestroy(static_cast<ze_event_handle_t>(h)); }},
            {"queue", [](void* h) { return zeCommandQueueDestroy(static_cast<ze_command_queue_handle_t>(h)); }},
            {"command list", [](void* h) { return zeCommandListDestroy(static_cast<ze_command_list_handle_t>(h)); }},
            {"fence", [](void* h) { return zeFenceDestroy(static_cast<ze_fence_handle_t>(h)); }},
            {"tracer", [f = tracer_destroy](void* h) { return f(static_cast<zet_metric_tracer_exp_handle_t>(h)); }},
            {"decoder", [f = decoder_destroy](void* h) { return f(static_cast<zet_metric_decoder_exp_handle_t>(h)); }},
        };
        return out;
    }

    ze_command_queue_handle_t queue = nullptr;
    ze_fence_handle_t fence = nullptr;
    ze_event_pool_handle_t pool = nullptr;
    ze_event_handle_t event = nullptr;
    ze_device_handle_t metric_device = nullptr;  // the device of the metric group
    zet_metric_group_handle_t group = nullptr;
    zet_metric_handle_t metric = nullptr;
    zet_metric_tracer_exp_handle_t tracer = nullptr;
    zet_metric_decoder_exp_handle_t decoder = nullptr;
    decltype(&zetMetricTracerDestroyExp) tracer_destroy = nullptr;
    decltype(&zetMetricDecoderDestroyExp) decoder_destroy = nullptr;
    decltype(&zetMetricTracerReadDataExp) tracer_read = nullptr;
    decltype(&zetMetricDecoderGetDecodableMetricsExp) decodable = nullptr;
};

TEST_F(HandleKindsTest, EveryKindRefusesEveryOtherKindsHandle) {
    const std::vector<Kind> all = kinds();
    for (const Kind& as : all) {
        EXPECT_NE(as.use(as.live), ZE_RESULT_ERROR_INVALID_NULL_HANDLE) << as.name << " as itself";
        for (const Kind& other : all) {
            if (other.name == as.name) continue;
            EXPECT_EQ(as.use(other.live), ZE_RESULT_ERROR_INVALID_NULL_HANDLE) << other.name << " used as " << as.name;
        }
    }
}

TEST_F(HandleKindsTest, DestroyWithAnotherKindsHandleDestroysNothing) {
    const std::vector<Kind> all = kinds();
    for (const auto& [name, destroy] : destroyers()) {
        for (const Kind& other : all) {
            if (other.name == name) continue;
            const ze_result_t r = destroy(other.live);
            if (r == ZE_RESULT_ERROR_INVALID_NULL_HANDLE) continue;
            ADD_FAILURE() << "the " << name << " destroy of the " << other.name << " answered " << r;
            if (r == ZE_RESULT_SUCCESS) return;  // an object is gone: the fixture cannot tear down
        }
    }
    for (const Kind& k : all) EXPECT_NE(k.use(k.live), ZE_RESULT_ERROR_INVALID_NULL_HANDLE) << k.name << " survived";
}

TEST_F(HandleKindsTest, SignalWithAnotherKindsHandleSignalsNothing) {
    for (const Kind& other : kinds()) {
        if (other.live == event) continue;
        EXPECT_EQ(zeEventHostSignal(static_cast<ze_event_handle_t>(other.live)), ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
            << other.name;
        EXPECT_EQ(zeEventHostReset(static_cast<ze_event_handle_t>(other.live)), ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
            << other.name;
        if (other.live != fence) {
            EXPECT_EQ(zeFenceReset(static_cast<ze_fence_handle_t>(other.live)), ZE_RESULT_ERROR_INVALID_NULL_HANDLE)
                << other.name;
        }
    }
    EXPECT_EQ(zeEventQueryStatus(event), ZE_RESULT_NOT_READY);
}

// Handles are never given out twice, whatever the kind: a new object never takes the value
// of a destroyed one of another kind.
TEST_F(HandleKindsTest, ValuesAreUniqueAcrossKinds) {
    ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t c = nullptr;
    ZE_OK(zeContextCreate(driver, &cd, &c));
    ZE_OK(zeContextDestroy(c));
    ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t p = nullptr;
    ZE_OK(zeEventPoolCreate(context, &pd, 1, &device, &p));
    EXPECT_NE(static_cast<void*>(p), static_cast<void*>(c));
    EXPECT_EQ(zeContextGetStatus(c), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventPoolDestroy(reinterpret_cast<ze_event_pool_handle_t>(c)), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    for (const Kind& k : kinds()) EXPECT_NE(static_cast<void*>(p), k.live) << k.name;
    ZE_OK(zeEventPoolDestroy(p));
}

}  // namespace
}  // namespace zetest
