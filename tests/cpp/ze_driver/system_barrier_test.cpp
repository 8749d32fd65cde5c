// zeContextSystemBarrier: on every device, the flush of writes that reached its memory from
// outside its commands; bad handles refused.
#include "ze_fixture.hpp"

namespace {

using zetest::is_sim;

class SystemBarrierTest : public zetest::ZeDriver {};

// The sim device flushes (its memory is the process's); a CUDA device flushes where its
// driver and hardware offer cuFlushGPUDirectRDMAWrites, and says so where they do not.
TEST_F(SystemBarrierTest, FlushesWhereTheBackendCan) {
    for (ze_device_handle_t d : devices) {
        const ze_result_t r = zeContextSystemBarrier(context, d);
        if (is_sim(d))
            EXPECT_EQ(r, ZE_RESULT_SUCCESS);
        else
            EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) << r;
    }
}

// A host write into host memory, then the barrier, then a copy of it: the copy sees it.
TEST_F(SystemBarrierTest, CommandsAfterTheBarrierSeeEarlierWrites) {
    if (!is_sim(device)) GTEST_SKIP() << "the first device is no sim device";
    std::memset(host, 0x42, kBytes);
    ZE_OK(zeContextSystemBarrier(context, device));
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, host, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, dev, kBytes, nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(std::memcmp(host, host2, kBytes), 0);
}

TEST_F(SystemBarrierTest, BadHandlesAreRefused) {
    EXPECT_EQ(zeContextSystemBarrier(nullptr, device), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeContextSystemBarrier(context, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    // A context passed as the device, a device as the context.
    EXPECT_EQ(zeContextSystemBarrier(context, reinterpret_cast<ze_device_handle_t>(context)),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeContextSystemBarrier(reinterpret_cast<ze_context_handle_t>(device), device),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

}  // namespace
