// ZE_experimental_global_offset through the loader: the driver advertises it, and the offset
// set with zeKernelSetGlobalOffsetExp is state of the kernel that launches capture, seen by
// get_global_offset and included in get_global_id (work_items.cl).
#include <array>
#include <cstring>
#include <string>
#include <vector>

#include "spirv_kernels.hpp"
#include "ze_fixture.hpp"

namespace {

using zetest::kForever;

constexpr size_t kValuesPerItem = 16;  // what work_item_ids writes per work-item

class ZeGlobalOffset : public zetest::ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        if (!zetest::builds_spirv(device)) GTEST_SKIP() << "the device builds no SPIR-V";
        const std::vector<uint8_t> spirv = zetest::spirv_kernel("work_items");
        ASSERT_FALSE(spirv.empty());
        ZE_OK(zetest::create_spirv_module(context, device, spirv, "", &module));
        ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "work_item_ids"};
        ZE_OK(zeKernelCreate(module, &kd, &kernel));
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        ZE_OK(zeMemAllocShared(context, &dd, &hd, kOutBytes, 64, device, &out));
        ZE_OK(zeKernelSetArgumentValue(kernel, 0, sizeof out, &out));
        ZE_OK(zeKernelSetGroupSize(kernel, 2, 2, 1));
    }

    void TearDown() override {
        if (out) {
            EXPECT_EQ(zeMemFree(context, out), ZE_RESULT_SUCCESS);
        }
        if (kernel) {
            EXPECT_EQ(zeKernelDestroy(kernel), ZE_RESULT_SUCCESS);
        }
        if (module) {
            EXPECT_EQ(zeModuleDestroy(module), ZE_RESULT_SUCCESS);
        }
        ZeDriver::TearDown();
    }

    // Value `v` of work-item (x, y, z) of the last launch over `groups` of 2x2x1.
    uint64_t value(const ze_group_count_t& groups, uint32_t x, uint32_t y, uint32_t z, size_t v) const {
        const size_t gx = 2 * groups.groupCountX, gy = 2 * groups.groupCountY;
        const size_t linear = (z * gy + y) * gx + x;
        return static_cast<const uint64_t*>(out)[linear * kValuesPerItem + v];
    }

    // Checks every work-item of a launch over `groups` ran with global offset `o`.
    void expect_offset(const ze_group_count_t& groups, const std::array<uint64_t, 3>& o) const {
        for (uint32_t z = 0; z < groups.groupCountZ; ++z)
            for (uint32_t y = 0; y < 2 * groups.groupCountY; ++y)
                for (uint32_t x = 0; x < 2 * groups.groupCountX; ++x) {
                    ASSERT_EQ(value(groups, x, y, z, 0), x + o[0]) << x << "," << y << "," << z;
                    ASSERT_EQ(value(groups, x, y, z, 1), y + o[1]) << x << "," << y << "," << z;
                    ASSERT_EQ(value(groups, x, y, z, 2), z + o[2]) << x << "," << y << "," << z;
                    ASSERT_EQ(value(groups, x, y, z, 12), o[0] * 10000 + o[1] * 100 + o[2]);
                    ASSERT_EQ(value(groups, x, y, z, 15), x + o[0]);
                }
    }

    static constexpr size_t kOutBytes = 1 << 16;
    ze_module_handle_t module = nullptr;
    ze_kernel_handle_t kernel = nullptr;
    void* out = nullptr;
};

TEST_F(ZeGlobalOffset, DriverAdvertisesTheExtension) {
    uint32_t count = 0;
    ZE_OK(zeDriverGetExtensionProperties(driver, &count, nullptr));
    std::vector<ze_driver_extension_properties_t> props(count);
    ZE_OK(zeDriverGetExtensionProperties(driver, &count, props.data()));
    bool found = false;
    for (const auto& p : props) found = found || std::string(p.name) == ZE_GLOBAL_OFFSET_EXP_NAME;
    EXPECT_TRUE(found);
    void* f = nullptr;
    ZE_OK(zeDriverGetExtensionFunctionAddress(driver, "zeKernelSetGlobalOffsetExp", &f));
    EXPECT_NE(f, nullptr);
}

TEST_F(ZeGlobalOffset, WorkItemsSeeTheOffsetOfTheirLaunch) {
    const ze_group_count_t groups{2, 3, 2};
    ZE_OK(zeKernelSetGlobalOffsetExp(kernel, 5, 7, 11));
    ZE_OK(zeCommandListAppendLaunchKernel(list, kernel, &groups, nullptr, 0, nullptr));
    finish(list);
    expect_offset(groups, {5, 7, 11});
    // Back to no offset: launches after see none.
    ZE_OK(zeKernelSetGlobalOffsetExp(kernel, 0, 0, 0));
    ZE_OK(zeCommandListAppendLaunchKernel(list, kernel, &groups, nullptr, 0, nullptr));
    finish(list);
    expect_offset(groups, {0, 0, 0});
}

TEST_F(ZeGlobalOffset, RegularListKeepsTheOffsetOfItsAppend) {
    const ze_group_count_t groups{1, 1, 1};
    ZE_OK(zeKernelSetGlobalOffsetExp(kernel, 3, 0, 2));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    ZE_OK(zeCommandListAppendLaunchKernel(regular, kernel, &groups, nullptr, 0, nullptr));
    ZE_OK(zeKernelSetGlobalOffsetExp(kernel, 9, 9, 9));  // after the append: not the launch's
    ZE_OK(zeCommandListClose(regular));
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
    ZE_OK(zeCommandQueueSynchronize(queue, kForever));
    expect_offset(groups, {3, 0, 2});
    ZE_OK(zeCommandQueueDestroy(queue));
    ZE_OK(zeCommandListDestroy(regular));
}

TEST_F(ZeGlobalOffset, NullKernelIsRefused) {
    EXPECT_EQ(zeKernelSetGlobalOffsetExp(nullptr, 1, 2, 3), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

}  // namespace
