// The core API's object queries (API 1.9) and the root device (API 1.7): each answers what
// the object was created with, and bad input gets the specification's error. Loader 1.8
// has no entry for them: the functions come from the driver's own tables (driver_table.hpp).
#include "driver_table.hpp"
#include "ze_fixture.hpp"

namespace {

using zetest::driver_table_function;

class ObjectQueries : public zetest::ZeDriver {
protected:
    // `function` of `getter`'s table for API 1.9, as type F; fails the test when missing.
    template <typename F>
    F function(std::string_view getter, std::string_view name) {
        F f = driver_table_function<F>(getter, name, 9);
        EXPECT_NE(f, nullptr) << name;
        return f;
    }
};

TEST_F(ObjectQueries, ARootDeviceHasANullRoot) {
    auto get_root = function<decltype(&zeDeviceGetRootDevice)>("zeGetDeviceProcAddrTable", "zeDeviceGetRootDevice");
    ASSERT_NE(get_root, nullptr);
    ze_device_handle_t root = device;
    ZE_OK(get_root(device, &root));
    EXPECT_EQ(root, nullptr);
    EXPECT_EQ(get_root(device, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(get_root(nullptr, &root), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(ObjectQueries, AQueueTellsItsOrdinalAndIndex) {
    auto get_ordinal = function<decltype(&zeCommandQueueGetOrdinal)>("zeGetCommandQueueProcAddrTable",
                                                                     "zeCommandQueueGetOrdinal");
    auto get_index = function<decltype(&zeCommandQueueGetIndex)>("zeGetCommandQueueProcAddrTable",
                                                                 "zeCommandQueueGetIndex");
    ASSERT_TRUE(get_ordinal && get_index);
    uint32_t groups = 0;
    ZE_OK(zeDeviceGetCommandQueueGroupProperties(device, &groups, nullptr));
    const uint32_t ordinal = groups - 1;
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, ordinal, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t q = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &q));
    uint32_t got = ~0u;
    ZE_OK(get_ordinal(q, &got));
    EXPECT_EQ(got, ordinal);
    got = ~0u;
    ZE_OK(get_index(q, &got));
    EXPECT_EQ(got, 0u);
    EXPECT_EQ(get_ordinal(q, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(get_index(nullptr, &got), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // A handle of another kind is none.
    EXPECT_EQ(get_ordinal(reinterpret_cast<ze_command_queue_handle_t>(list), &got),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeCommandQueueDestroy(q));
    EXPECT_EQ(get_ordinal(q, &got), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(ObjectQueries, AListTellsItsDeviceContextOrdinalAndKind) {
    const char* table = "zeGetCommandListProcAddrTable";
    auto get_device = function<decltype(&zeCommandListGetDeviceHandle)>(table, "zeCommandListGetDeviceHandle");
    auto get_context = function<decltype(&zeCommandListGetContextHandle)>(table, "zeCommandListGetContextHandle");
    auto get_ordinal = function<decltype(&zeCommandListGetOrdinal)>(table, "zeCommandListGetOrdinal");
    auto get_index = function<decltype(&zeCommandListImmediateGetIndex)>(table, "zeCommandListImmediateGetIndex");
    auto is_immediate = function<decltype(&zeCommandListIsImmediate)>(table, "zeCommandListIsImmediate");
    ASSERT_TRUE(get_device && get_context && get_ordinal && get_index && is_immediate);

    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    for (ze_command_list_handle_t l : {list, regular}) {
        const bool immediate = l == list;
        ze_device_handle_t d = nullptr;
        ZE_OK(get_device(l, &d));
        EXPECT_EQ(d, device);
        ze_context_handle_t c = nullptr;
        ZE_OK(get_context(l, &c));
        EXPECT_EQ(c, context);
        uint32_t ordinal = ~0u;
        ZE_OK(get_ordinal(l, &ordinal));
        EXPECT_EQ(ordinal, 0u);
        ze_bool_t answer = !immediate;
        ZE_OK(is_immediate(l, &answer));
        EXPECT_EQ(answer != 0, immediate);
        uint32_t index = ~0u;
        EXPECT_EQ(get_index(l, &index), immediate ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT);
        if (immediate) {
            EXPECT_EQ(index, 0u);
        }
    }
    ze_bool_t answer = 0;
    EXPECT_EQ(is_immediate(list, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(get_context(nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeCommandListDestroy(regular));
    EXPECT_EQ(is_immediate(regular, &answer), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(ObjectQueries, AnEventAndItsPoolTellWhatTheyWereMadeWith) {
    auto get_pool = function<decltype(&zeEventGetEventPool)>("zeGetEventProcAddrTable", "zeEventGetEventPool");
    auto get_signal = function<decltype(&zeEventGetSignalScope)>("zeGetEventProcAddrTable", "zeEventGetSignalScope");
    auto get_wait = function<decltype(&zeEventGetWaitScope)>("zeGetEventProcAddrTable", "zeEventGetWaitScope");
    auto pool_context = function<decltype(&zeEventPoolGetContextHandle)>("zeGetEventPoolProcAddrTable",
                                                                         "zeEventPoolGetContextHandle");
    auto pool_flags = function<decltype(&zeEventPoolGetFlags)>("zeGetEventPoolProcAddrTable", "zeEventPoolGetFlags");
    ASSERT_TRUE(get_pool && get_signal && get_wait && pool_context && pool_flags);

    const ze_event_pool_flags_t flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP;
    ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, 2};
    ze_event_pool_handle_t pool = nullptr;
    ZE_OK(zeEventPoolCreate(context, &pd, 1, &device, &pool));
    ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 1, ZE_EVENT_SCOPE_FLAG_HOST,
                       ZE_EVENT_SCOPE_FLAG_SUBDEVICE};
    ze_event_handle_t event = nullptr;
    ZE_OK(zeEventCreate(pool, &ed, &event));

    ze_event_pool_handle_t p = nullptr;
    ZE_OK(get_pool(event, &p));
    EXPECT_EQ(p, pool);
    ze_event_scope_flags_t scope = 0;
    ZE_OK(get_signal(event, &scope));
    EXPECT_EQ(scope, ZE_EVENT_SCOPE_FLAG_HOST);
    ZE_OK(get_wait(event, &scope));
    EXPECT_EQ(scope, ZE_EVENT_SCOPE_FLAG_SUBDEVICE);
    ze_context_handle_t c = nullptr;
    ZE_OK(pool_context(pool, &c));
    EXPECT_EQ(c, context);
    ze_event_pool_flags_t f = 0;
    ZE_OK(pool_flags(pool, &f));
    EXPECT_EQ(f, flags);

    EXPECT_EQ(get_pool(event, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(pool_flags(nullptr, &f), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(get_signal(reinterpret_cast<ze_event_handle_t>(pool), &scope), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeEventDestroy(event));
    EXPECT_EQ(get_wait(event, &scope), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeEventPoolDestroy(pool));
    EXPECT_EQ(pool_context(pool, &c), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

}  // namespace
