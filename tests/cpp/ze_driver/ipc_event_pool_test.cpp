// zeEventPoolGetIpcHandle: a pool without ZE_EVENT_POOL_FLAG_IPC is refused as the
// specification says; an IPC pool is not shared by any device yet (docs/ze_driver.md).
#include "ze_fixture.hpp"

namespace {

class IpcEventPoolTest : public zetest::ZeDriver {
protected:
    ze_event_pool_handle_t pool_with(uint32_t flags) {
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, 4};
        ze_event_pool_handle_t pool = nullptr;
        EXPECT_EQ(zeEventPoolCreate(context, &pd, 1, &device, &pool), ZE_RESULT_SUCCESS);
        owned_pools.push_back(pool);
        return pool;
    }
};

TEST_F(IpcEventPoolTest, GetIpcHandleChecksThePool) {
    ze_ipc_event_pool_handle_t ipc{};
    EXPECT_EQ(zeEventPoolGetIpcHandle(pool_with(ZE_EVENT_POOL_FLAG_HOST_VISIBLE), &ipc),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_event_pool_handle_t shared = pool_with(ZE_EVENT_POOL_FLAG_IPC | ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    EXPECT_EQ(zeEventPoolGetIpcHandle(shared, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeEventPoolGetIpcHandle(nullptr, &ipc), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventPoolGetIpcHandle(reinterpret_cast<ze_event_pool_handle_t>(context), &ipc),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventPoolGetIpcHandle(shared, &ipc), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

}  // namespace
