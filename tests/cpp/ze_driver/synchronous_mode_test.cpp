// ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS as programs rely on it (AML's area test reads a copy's
// destination right after the append): an immediate list in that mode returns from each
// append once the command completed, and a queue in that mode returns from
// zeCommandQueueExecuteCommandLists once the lists ran. CTest runs this program with the sim
// device's copies throttled, so a command still running when the call returns is seen.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

constexpr size_t kCopyBytes = size_t{4} << 20;

class SynchronousModeTest : public ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ZE_OK(zeMemAllocDevice(context, &dd, kCopyBytes, 64, device, &big));
        src.resize(kCopyBytes);
        for (size_t i = 0; i < kCopyBytes; ++i) src[i] = static_cast<uint8_t>(i * 13 + 5);
        back.assign(kCopyBytes, 0);
    }

    void TearDown() override {
        if (big) {
            EXPECT_EQ(zeMemFree(context, big), ZE_RESULT_SUCCESS);
        }
        ZeDriver::TearDown();
    }

    // An immediate list or queue descriptor of the compute group in `mode`.
    static ze_command_queue_desc_t queue_desc(ze_command_queue_mode_t mode) {
        return {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, mode, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    }

    void* big = nullptr;
    std::vector<uint8_t> src;
    std::vector<uint8_t> back;
};

TEST_F(SynchronousModeTest, ImmediateListAppendsReturnOnceTheCommandCompleted) {
    const ze_command_queue_desc_t qd = queue_desc(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_command_list_handle_t sync_list = nullptr;
    ZE_OK(zeCommandListCreateImmediate(context, device, &qd, &sync_list));
    auto events = make_events(2);
    ZE_OK(zeCommandListAppendMemoryCopy(sync_list, big, src.data(), kCopyBytes, events[0], 0, nullptr));
    EXPECT_EQ(zeEventQueryStatus(events[0]), ZE_RESULT_SUCCESS);
    ZE_OK(zeCommandListAppendMemoryCopy(sync_list, back.data(), big, kCopyBytes, events[1], 0, nullptr));
    EXPECT_EQ(zeEventQueryStatus(events[1]), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(back.data(), src.data(), kCopyBytes), 0);
    // A fill is read back at once too.
    const uint32_t pattern = 0x5EED5EED;
    ZE_OK(zeCommandListAppendMemoryFill(sync_list, back.data(), &pattern, sizeof pattern, kCopyBytes, nullptr, 0,
                                        nullptr));
    for (size_t i = 0; i < kCopyBytes / sizeof pattern; ++i)
        ASSERT_EQ(reinterpret_cast<const uint32_t*>(back.data())[i], pattern) << i;
    EXPECT_EQ(zeCommandListDestroy(sync_list), ZE_RESULT_SUCCESS);
}

TEST_F(SynchronousModeTest, AsynchronousImmediateListsStillReturnAtOnce) {
    // The fixture's list is asynchronous: an append behind an event the host has not
    // signalled returns, and the command runs once the host signals it.
    auto events = make_events(2);
    ZE_OK(zeCommandListAppendMemoryCopy(list, big, src.data(), kCopyBytes, events[1], 1, &events[0]));
    EXPECT_EQ(zeEventQueryStatus(events[1]), ZE_RESULT_NOT_READY);
    ZE_OK(zeEventHostSignal(events[0]));
    ZE_OK(zeEventHostSynchronize(events[1], kForever));
}

TEST_F(SynchronousModeTest, SynchronousQueueExecutionReturnsOnceTheListsRan) {
    const ze_command_queue_desc_t qd = queue_desc(ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    ZE_OK(zeCommandListAppendMemoryCopy(regular, big, src.data(), kCopyBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendBarrier(regular, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(regular, back.data(), big, kCopyBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListClose(regular));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
    EXPECT_EQ(std::memcmp(back.data(), src.data(), kCopyBytes), 0);
    EXPECT_EQ(zeCommandListDestroy(regular), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeCommandQueueDestroy(queue), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zetest
