// Region copies (zeCommandListAppendMemoryCopyRegion) between pitched layouts, on immediate
// and regular lists, their argument checks, and copies from another context's memory.
#include <cstring>
#include <functional>
#include <vector>

#include "ze_fixture.hpp"

namespace {

using zetest::kForever;

class RegionCopyTest : public zetest::ZeDriver {
protected:
    // Nothing a failed test left queued may outlive the memory it copies.
    void TearDown() override {
        if (list) finish(list);
        ZeDriver::TearDown();
    }

    // The byte at (x, y, z) of a layout with `pitch` and `slice_pitch`, from `origin`.
    static size_t at(const ze_copy_region_t& origin, uint32_t pitch, uint32_t slice_pitch, uint32_t x, uint32_t y,
                     uint32_t z) {
        return size_t{origin.originZ + z} * slice_pitch + size_t{origin.originY + y} * pitch + origin.originX + x;
    }

    // Copies a box from host memory laid out with one pitch to device memory laid out with
    // another and back to `host2` through `l` (+ `run` for a regular list), and checks every
    // byte of the box arrived and nothing around it was written.
    void round_trip(ze_command_list_handle_t l, const std::function<void(ze_command_list_handle_t)>& run) {
        const ze_copy_region_t src_box{3, 2, 1, 10, 4, 3};
        const ze_copy_region_t dev_box{1, 0, 2, 10, 4, 3};
        const uint32_t src_pitch = 16, src_slice = 16 * 8, dev_pitch = 12, dev_slice = 12 * 5;
        auto* src = static_cast<uint8_t*>(host);
        for (size_t i = 0; i < kBytes; ++i) src[i] = static_cast<uint8_t>(i * 7 + 1);
        std::memset(host2, 0xEE, kBytes);
        uint8_t fill = 0;
        ZE_OK(zeCommandListAppendMemoryFill(l, dev, &fill, 1, kBytes, nullptr, 0, nullptr));
        ZE_OK(zeCommandListAppendBarrier(l, nullptr, 0, nullptr));
        ZE_OK(zeCommandListAppendMemoryCopyRegion(l, dev, &dev_box, dev_pitch, dev_slice, host, &src_box, src_pitch,
                                                  src_slice, nullptr, 0, nullptr));
        ZE_OK(zeCommandListAppendBarrier(l, nullptr, 0, nullptr));
        // Back with the source's own layout into host2, so each byte returns to its place.
        ZE_OK(zeCommandListAppendMemoryCopyRegion(l, host2, &src_box, src_pitch, src_slice, dev, &dev_box, dev_pitch,
                                                  dev_slice, nullptr, 0, nullptr));
        run(l);
        const auto* back = static_cast<const uint8_t*>(host2);
        std::vector<bool> in_box(kBytes);
        for (uint32_t z = 0; z < src_box.depth; ++z)
            for (uint32_t y = 0; y < src_box.height; ++y)
                for (uint32_t x = 0; x < src_box.width; ++x) {
                    const size_t i = at(src_box, src_pitch, src_slice, x, y, z);
                    ASSERT_EQ(back[i], src[i]) << "x " << x << " y " << y << " z " << z;
                    in_box[i] = true;
                }
        for (size_t i = 0; i < kBytes; ++i)
            if (!in_box[i]) {
                ASSERT_EQ(back[i], 0xEE) << "byte " << i << " outside the box was written";
            }
    }
};

TEST_F(RegionCopyTest, ImmediateListCopiesABoxBetweenLayouts) {
    round_trip(list, [this](ze_command_list_handle_t l) { finish(l); });
}

TEST_F(RegionCopyTest, RegularListCopiesABoxBetweenLayouts) {
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    round_trip(regular, [this](ze_command_list_handle_t l) {
        ZE_OK(zeCommandListClose(l));
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_queue_handle_t q = nullptr;
        ZE_OK(zeCommandQueueCreate(context, device, &qd, &q));
        ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &l, nullptr));
        ZE_OK(zeCommandQueueSynchronize(q, kForever));
        ZE_OK(zeCommandQueueDestroy(q));
    });
    ZE_OK(zeCommandListDestroy(regular));
}

TEST_F(RegionCopyTest, PackedRowsAndAnEmptyBoxSignalTheirEvent) {
    auto ev = make_events(2);
    const ze_copy_region_t box{0, 0, 0, 64, 8, 2};
    std::memset(host, 0x5A, kBytes);
    std::memset(host2, 0, kBytes);
    ZE_OK(
        zeCommandListAppendMemoryCopyRegion(list, host2, &box, 64, 64 * 8, host, &box, 64, 64 * 8, ev[0], 0, nullptr));
    ZE_OK(zeEventHostSynchronize(ev[0], kForever));
    EXPECT_EQ(static_cast<uint8_t*>(host2)[64 * 8 * 2 - 1], 0x5A);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[64 * 8 * 2], 0);
    const ze_copy_region_t empty{0, 0, 0, 0, 0, 0};  // every extent and pitch zero, as an empty copy has
    ZE_OK(zeCommandListAppendMemoryCopyRegion(list, host2, &empty, 0, 0, host, &empty, 0, 0, ev[1], 1, &ev[0]));
    ZE_OK(zeEventHostSynchronize(ev[1], kForever));
}

TEST_F(RegionCopyTest, DepthZeroIsOneSlice) {
    const ze_copy_region_t flat{2, 1, 0, 8, 3, 0};
    std::memset(host, 6, kBytes);
    std::memset(host2, 0, kBytes);
    ZE_OK(zeCommandListAppendMemoryCopyRegion(list, host2, &flat, 16, 0, host, &flat, 16, 0, nullptr, 0, nullptr));
    finish(list);
    const auto* out = static_cast<const uint8_t*>(host2);
    EXPECT_EQ(out[1 * 16 + 2], 6);
    EXPECT_EQ(out[3 * 16 + 9], 6);
    EXPECT_EQ(out[3 * 16 + 10], 0);
    EXPECT_EQ(out[4 * 16 + 2], 0);
    EXPECT_EQ(out[1 * 16 + 1], 0);
}

TEST_F(RegionCopyTest, TheFirstRowWaitsForTheWaitList) {
    auto ev = make_events(2);
    const ze_copy_region_t box{0, 0, 0, 8, 4, 1};
    std::memset(host, 1, kBytes);
    std::memset(host2, 0, kBytes);
    ZE_OK(zeCommandListAppendMemoryCopyRegion(list, host2, &box, 32, 0, host, &box, 16, 0, ev[1], 1, &ev[0]));
    EXPECT_EQ(zeEventQueryStatus(ev[1]), ZE_RESULT_NOT_READY);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[0], 0);
    ZE_OK(zeEventHostSignal(ev[0]));
    ZE_OK(zeEventHostSynchronize(ev[1], kForever));
    EXPECT_EQ(static_cast<uint8_t*>(host2)[3 * 32 + 7], 1);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[3 * 32 + 8], 0);
}

TEST_F(RegionCopyTest, BadArgumentsAreRefusedBeforeAnythingIsQueued) {
    const ze_copy_region_t box{0, 0, 0, 16, 4, 2};
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(nullptr, dev, &box, 16, 64, host, &box, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, nullptr, &box, 16, 64, host, &box, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &box, 16, 64, nullptr, &box, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, nullptr, 16, 64, host, &box, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &box, 16, 64, host, nullptr, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    const ze_copy_region_t taller{0, 0, 0, 16, 5, 2};
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &box, 16, 64, host, &taller, 16, 80, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);  // extents differ
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &box, 8, 64, host, &box, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);  // rows wider than the pitch
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &box, 16, 32, host, &box, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);  // slices larger than the slice pitch
    const ze_copy_region_t far{0, 0, 0, 16, 4, 2};
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &far, 16, kBytes, host, &box, 16, 64, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);                             // second slice past the allocation
    const ze_copy_region_t huge{0, 0xFFFFFFFFu, 0xFFFFFFFFu, 16, 4, 2};  // its end overflows 64 bits
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &huge, 0xFFFFFFFFu, 0xFFFFFFFFu, host, &box, 16, 64,
                                                  nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    auto ev = make_events(1);
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(list, dev, &box, 16, 64, host, &box, 16, 64, ev[0], 1, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);  // a wait count without a list
    // Nothing of the refused copies was queued: the event was never signalled.
    finish(list);
    EXPECT_EQ(zeEventQueryStatus(ev[0]), ZE_RESULT_NOT_READY);
}

TEST_F(RegionCopyTest, ARefusedCopyLeavesARegularListEmpty) {
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    const ze_copy_region_t box{0, 0, 0, 16, 4, 2};
    const ze_copy_region_t past{0, 0, 1, 16, 4, 2};
    std::memset(host2, 0, kBytes);
    std::memset(host, 3, kBytes);
    EXPECT_EQ(zeCommandListAppendMemoryCopyRegion(regular, host2, &past, 16, kBytes / 2, host, &box, 16, 64, nullptr, 0,
                                                  nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    ZE_OK(zeCommandListClose(regular));
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t q = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &q));
    ZE_OK(zeCommandQueueExecuteCommandLists(q, 1, &regular, nullptr));
    ZE_OK(zeCommandQueueSynchronize(q, kForever));
    EXPECT_EQ(static_cast<uint8_t*>(host2)[kBytes / 2], 0);  // no row of the refused copy ran
    ZE_OK(zeCommandQueueDestroy(q));
    ZE_OK(zeCommandListDestroy(regular));
}

TEST_F(RegionCopyTest, CopyFromAnotherContext) {
    ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t other = nullptr;
    ZE_OK(zeContextCreate(driver, &cd, &other));
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* theirs = nullptr;
    ZE_OK(zeMemAllocHost(other, &hd, 256, 64, &theirs));
    std::memset(theirs, 0x42, 256);
    std::memset(host2, 0, kBytes);
    ZE_OK(zeCommandListAppendMemoryCopyFromContext(list, dev, other, theirs, 256, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, dev, 256, nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[255], 0x42);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[256], 0);
    EXPECT_EQ(zeCommandListAppendMemoryCopyFromContext(list, dev, other, nullptr, 256, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryCopyFromContext(list, nullptr, other, theirs, 256, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryCopyFromContext(list, dev, nullptr, theirs, 256, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendMemoryCopyFromContext(nullptr, dev, other, theirs, 256, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeMemFree(other, theirs));
    ZE_OK(zeContextDestroy(other));
    EXPECT_EQ(zeCommandListAppendMemoryCopyFromContext(list, dev, other, host, 256, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);  // a destroyed context
}

}  // namespace
