// System memory through the driver, as a Level Zero program uses it (AML's DMA test, the
// specification's conformance tests): copies and fills to and from malloc'd memory, the
// stack and a std::vector, on immediate and regular lists; zeMemGetAllocProperties says
// ZE_MEMORY_TYPE_UNKNOWN for such memory, as Intel's driver does.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

using SystemMemoryTest = ZeDriver;

TEST_F(SystemMemoryTest, ImmediateCopiesAndFillsOfMallocedMemory) {
    auto* src = static_cast<uint8_t*>(std::malloc(kBytes));
    auto* back = static_cast<uint8_t*>(std::malloc(kBytes));
    ASSERT_TRUE(src && back);
    for (size_t i = 0; i < kBytes; ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
    std::memset(back, 0, kBytes);
    auto done = make_events(1)[0];
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, src, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, back, dev, kBytes, done, 0, nullptr));
    ZE_OK(zeEventHostSynchronize(done, kForever));
    EXPECT_EQ(std::memcmp(src, back, kBytes), 0);
    // malloc'd to malloc'd, and to zehal's host memory.
    std::memset(back, 0, kBytes);
    ZE_OK(zeCommandListAppendMemoryCopy(list, back, src, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host, src, kBytes, nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(std::memcmp(src, back, kBytes), 0);
    EXPECT_EQ(std::memcmp(src, host, kBytes), 0);
    // A fill of malloc'd memory.
    const uint32_t pattern = 0xCAFEF00D;
    ZE_OK(zeCommandListAppendMemoryFill(list, back, &pattern, sizeof pattern, kBytes, nullptr, 0, nullptr));
    finish(list);
    for (size_t i = 0; i < kBytes / 4; ++i) ASSERT_EQ(reinterpret_cast<uint32_t*>(back)[i], pattern);
    std::free(src);
    std::free(back);
}

TEST_F(SystemMemoryTest, RegularListsCopyTheStackAndAVector) {
    std::vector<uint16_t> vec(kBytes / 2);
    for (size_t i = 0; i < vec.size(); ++i) vec[i] = static_cast<uint16_t>(i);
    uint8_t on_stack[4096];
    std::memset(on_stack, 0, sizeof on_stack);
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    ZE_OK(zeCommandListAppendMemoryCopy(regular, dev, vec.data(), kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendBarrier(regular, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(regular, on_stack, dev, sizeof on_stack, nullptr, 0, nullptr));
    ZE_OK(zeCommandListClose(regular));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
    ZE_OK(zeCommandQueueSynchronize(queue, kForever));
    EXPECT_EQ(std::memcmp(on_stack, vec.data(), sizeof on_stack), 0);
    ZE_OK(zeCommandListDestroy(regular));
    ZE_OK(zeCommandQueueDestroy(queue));
}

TEST_F(SystemMemoryTest, SystemMemoryIsOfUnknownTypeAndStillChecked) {
    std::vector<uint8_t> vec(256);
    auto* heap = static_cast<uint8_t*>(std::malloc(256));
    ASSERT_NE(heap, nullptr);
    for (const void* p : {static_cast<const void*>(vec.data() + 10), static_cast<const void*>(heap)}) {
        ze_memory_allocation_properties_t props{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, nullptr,
                                                ZE_MEMORY_TYPE_HOST, 1, 1};
        ze_device_handle_t owner = device;
        ZE_OK(zeMemGetAllocProperties(context, p, &props, &owner));
        EXPECT_EQ(props.type, ZE_MEMORY_TYPE_UNKNOWN);
        EXPECT_EQ(owner, nullptr);
    }
    // Not zehal's to free; overlapping ranges are still refused.
    EXPECT_EQ(zeMemFree(context, heap), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, heap + 8, heap, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, nullptr, heap, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    std::free(heap);
}

}  // namespace
}  // namespace zetest
