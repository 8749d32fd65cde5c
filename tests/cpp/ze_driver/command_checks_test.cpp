// Commands are checked before anything runs: a regular list refuses a bad operand at
// append as an immediate list does, an execution of command lists is all or nothing, and
// a refused kernel timestamp query writes nothing.
#include <sys/mman.h>

#include <cstring>
#include <vector>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

class CommandChecksTest : public ZeDriver {
protected:
    ze_command_list_handle_t regular_list() {
        ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
        ze_command_list_handle_t l = nullptr;
        EXPECT_EQ(zeCommandListCreate(context, device, &ld, &l), ZE_RESULT_SUCCESS);
        return l;
    }
    ze_command_queue_handle_t queue() {
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_queue_handle_t q = nullptr;
        EXPECT_EQ(zeCommandQueueCreate(context, device, &qd, &q), ZE_RESULT_SUCCESS);
        return q;
    }
    // Two events of a timestamp pool, each signalled by a command that recorded timestamps.
    std::vector<ze_event_handle_t> timed_events() {
        auto ev = make_events(2, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
        const uint8_t byte = 1;
        for (ze_event_handle_t e : ev) {
            EXPECT_EQ(zeCommandListAppendMemoryFill(list, dev, &byte, 1, 64, e, 0, nullptr), ZE_RESULT_SUCCESS);
        }
        EXPECT_EQ(zeEventHostSynchronize(ev[1], kForever), ZE_RESULT_SUCCESS);
        return ev;
    }
};

TEST_F(CommandChecksTest, ARegularListRefusesWhatAnImmediateListRefuses) {
    ze_command_list_handle_t regular = regular_list();
    for (ze_command_list_handle_t l : {list, regular}) {
        EXPECT_EQ(zeCommandListAppendMemoryCopy(l, dev, host, kBytes + 1, nullptr, 0, nullptr),
                  ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(zeCommandListAppendMemoryCopy(l, host, static_cast<char*>(host) + 8, 64, nullptr, 0, nullptr),
                  ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
        const uint32_t word = 7;
        EXPECT_EQ(zeCommandListAppendMemoryFill(l, dev, &word, 4, 6, nullptr, 0, nullptr),
                  ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(
            zeCommandListAppendMemoryFill(l, static_cast<char*>(dev) + kBytes - 4, &word, 4, 8, nullptr, 0, nullptr),
            ZE_RESULT_ERROR_INVALID_SIZE);
        // A page below the lowest address a process may map: memory of nobody.
        auto* unmapped = reinterpret_cast<uint64_t*>(uintptr_t{4096});
        EXPECT_NE(zeCommandListAppendWriteGlobalTimestamp(l, unmapped, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
        auto plain = make_events(1);  // no timestamp flag
        EXPECT_EQ(zeCommandListAppendQueryKernelTimestamps(l, 1, plain.data(), host, nullptr, nullptr, 0, nullptr),
                  ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    }
    // Nothing was recorded: the closed list executes and does nothing.
    ZE_OK(zeCommandListClose(regular));
    ze_command_queue_handle_t q = queue();
    ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &regular, nullptr));
    ZE_OK(zeCommandQueueSynchronize(q, kForever));
    ZE_OK(zeCommandQueueDestroy(q));
    ZE_OK(zeCommandListDestroy(regular));
}

TEST_F(CommandChecksTest, EmptyCopiesAndFillsSignalTheirEventsInQueueOrder) {
    // Size 0 moves nothing; the command's events behave as a barrier's in its place.
    auto ev = make_events(3);
    const uint32_t word = 7;
    std::memset(host2, 0, kBytes);
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, host, 0, ev[1], 1, &ev[0]));
    ZE_OK(zeCommandListAppendMemoryFill(list, host2, &word, 4, 0, ev[2], 1, &ev[1]));
    EXPECT_EQ(zeEventQueryStatus(ev[2]), ZE_RESULT_NOT_READY);
    ZE_OK(zeEventHostSignal(ev[0]));
    ZE_OK(zeEventHostSynchronize(ev[2], kForever));
    EXPECT_EQ(zeEventQueryStatus(ev[1]), ZE_RESULT_SUCCESS);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[0], 0);
    // A bad pattern is refused whatever the size.
    EXPECT_EQ(zeCommandListAppendMemoryFill(list, host2, &word, 3, 0, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, nullptr, host, 0, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(CommandChecksTest, AnExecutionThatFailsRunsNothing) {
    // `first` fills host2; `second` copies from system memory unmapped after it was recorded
    // (memory of nobody by then). Executed together, neither runs and the fence stays
    // unsignalled.
    constexpr size_t kMapped = 1u << 16;
    void* doomed = mmap(nullptr, kMapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(doomed, MAP_FAILED);
    std::memset(host2, 0, kBytes);
    const uint8_t byte = 0x11;
    ze_command_list_handle_t first = regular_list();
    ze_command_list_handle_t second = regular_list();
    ZE_OK(zeCommandListAppendMemoryFill(first, host2, &byte, 1, 64, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryFill(second, static_cast<char*>(host2) + 64, &byte, 1, 64, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(second, dev, doomed, 64, nullptr, 0, nullptr));
    ZE_OK(zeCommandListClose(first));
    ZE_OK(zeCommandListClose(second));
    ASSERT_EQ(munmap(doomed, kMapped), 0);

    ze_command_queue_handle_t q = queue();
    ze_fence_desc_t fd{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
    ze_fence_handle_t fence = nullptr;
    ZE_OK(zeFenceCreate(q, &fd, &fence));
    ze_command_list_handle_t both[] = {first, second};
    EXPECT_NE(zeCommandQueueExecuteCommandLists(q, 2, both, fence), ZE_RESULT_SUCCESS);
    EXPECT_NE(zeCommandQueueExecuteCommandLists(q, 1, &second, fence), ZE_RESULT_SUCCESS);
    ZE_OK(zeCommandQueueSynchronize(q, kForever));
    EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
    for (size_t i = 0; i < 128; ++i) ASSERT_EQ(static_cast<uint8_t*>(host2)[i], 0) << "byte " << i;

    // The list that is fine still runs on its own.
    ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &first, fence));
    ZE_OK(zeFenceHostSynchronize(fence, kForever));
    EXPECT_EQ(static_cast<uint8_t*>(host2)[63], 0x11);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[64], 0);
    ZE_OK(zeFenceDestroy(fence));
    ZE_OK(zeCommandQueueDestroy(q));
    ZE_OK(zeCommandListDestroy(first));
    ZE_OK(zeCommandListDestroy(second));
}

TEST_F(CommandChecksTest, ARefusedKernelTimestampQueryWritesNothing) {
    auto ev = timed_events();
    constexpr size_t kResult = sizeof(ze_kernel_timestamp_result_t);
    // Room for one result only: the second runs past the end of the allocation.
    char* dst = static_cast<char*>(host) + kBytes - kResult - kResult / 2;
    const size_t offsets[2] = {0, kBytes - kResult / 2};
    ze_command_list_handle_t regular = regular_list();
    for (ze_command_list_handle_t l : {list, regular}) {
        std::memset(host, 0xAB, kBytes);
        EXPECT_EQ(zeCommandListAppendQueryKernelTimestamps(l, 2, ev.data(), dst, nullptr, nullptr, 0, nullptr),
                  ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(zeCommandListAppendQueryKernelTimestamps(l, 2, ev.data(), host, offsets, nullptr, 0, nullptr),
                  ZE_RESULT_ERROR_INVALID_SIZE);
        finish(list);
        for (size_t i = 0; i < kBytes; ++i) ASSERT_EQ(static_cast<uint8_t*>(host)[i], 0xAB) << "byte " << i;
    }
    ZE_OK(zeCommandListDestroy(regular));
}

}  // namespace
}  // namespace zetest
