// What tools ask of a kernel: its source attributes (as the module keeps them), its largest
// group and its profiling information (none), with bad input refused.
#include <string>
#include <vector>

#include "spec_ext.h"
#include "spirv_kernels.hpp"
#include "ze_fixture.hpp"

namespace {

class ZeKernelQueries : public zetest::ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        if (!zetest::builds_spirv(device)) GTEST_SKIP() << "the device builds no SPIR-V";
        const std::vector<uint8_t> spirv = zetest::spirv_kernel("attributes");
        ASSERT_FALSE(spirv.empty());
        ZE_OK(zetest::create_spirv_module(context, device, spirv, "", &module));
        for (auto [name, out] :
             {std::pair{"reqd_size", &sized}, std::pair{"empty", &plain}, std::pair{"hinted", &hinted}}) {
            ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
            ZE_OK(zeKernelCreate(module, &kd, out));
        }
    }
    void TearDown() override {
        for (ze_kernel_handle_t k : {sized, plain, hinted}) {
            if (k) {
                EXPECT_EQ(zeKernelDestroy(k), ZE_RESULT_SUCCESS);
            }
        }
        if (module) {
            EXPECT_EQ(zeModuleDestroy(module), ZE_RESULT_SUCCESS);
        }
        ZeDriver::TearDown();
    }
    // The source attributes of `k`, asked as the specification says (size, then string).
    std::string attributes(ze_kernel_handle_t k) {
        uint32_t size = 0;
        EXPECT_EQ(zeKernelGetSourceAttributes(k, &size, nullptr), ZE_RESULT_SUCCESS);
        std::string text(size, '#');
        char* at = text.data();
        EXPECT_EQ(zeKernelGetSourceAttributes(k, &size, &at), ZE_RESULT_SUCCESS);
        EXPECT_EQ(size, text.size());
        EXPECT_EQ(text.back(), '\0');
        text.pop_back();
        return text;
    }

    ze_module_handle_t module = nullptr;
    ze_kernel_handle_t sized = nullptr;
    ze_kernel_handle_t plain = nullptr;
    ze_kernel_handle_t hinted = nullptr;
};

TEST_F(ZeKernelQueries, SourceAttributesAreTheKernelsAsOpenCLCWritesThem) {
    EXPECT_EQ(attributes(sized), "reqd_work_group_size(8,4,1)");
    EXPECT_EQ(attributes(plain), "");
    EXPECT_EQ(attributes(hinted), "work_group_size_hint(1,1,1) vec_type_hint(float4)");
    // Too small an array is refused and left untouched; a null array or size is refused.
    char small[4] = {'x', 'x', 'x', 'x'};
    char* at = small;
    uint32_t size = sizeof small;
    EXPECT_EQ(zeKernelGetSourceAttributes(sized, &size, &at), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(small[0], 'x');
    char* none = nullptr;
    EXPECT_EQ(zeKernelGetSourceAttributes(sized, &size, &none), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeKernelGetSourceAttributes(sized, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeKernelGetSourceAttributes(nullptr, &size, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

// The module built again from its native binary (PTX on CUDA, where the attributes have no
// place of their own; the SPIR-V on sim) keeps the source attributes.
TEST_F(ZeKernelQueries, TheNativeBinaryKeepsTheSourceAttributes) {
    size_t size = 0;
    ZE_OK(zeModuleGetNativeBinary(module, &size, nullptr));
    std::vector<uint8_t> native(size);
    ZE_OK(zeModuleGetNativeBinary(module, &size, native.data()));
    ze_module_desc_t md{
        ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_NATIVE, native.size(), native.data(), "", nullptr};
    ze_module_handle_t again = nullptr;
    ZE_OK(zeModuleCreate(context, device, &md, &again, nullptr));
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "hinted"};
    ze_kernel_handle_t k = nullptr;
    ZE_OK(zeKernelCreate(again, &kd, &k));
    EXPECT_EQ(attributes(k), "work_group_size_hint(1,1,1) vec_type_hint(float4)");
    ZE_OK(zeKernelDestroy(k));
    ZE_OK(zeModuleDestroy(again));
}

// ze_kernel_max_group_size_properties_ext_t: the device's largest group for a kernel that
// declares no size, the declared size's product for one that does.
TEST_F(ZeKernelQueries, MaxGroupSizeIsTheKernels) {
    ze_device_compute_properties_t cp{};
    cp.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    ZE_OK(zeDeviceGetComputeProperties(device, &cp));
    for (auto [k, expected] : {std::pair{sized, 32u}, std::pair{plain, cp.maxTotalGroupSize}}) {
        ze_kernel_max_group_size_properties_ext_t largest{};
        largest.stype = static_cast<ze_structure_type_t>(ZEHAL_STYPE_KERNEL_MAX_GROUP_SIZE_EXT_PROPERTIES);
        ze_kernel_properties_t p{};
        p.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
        p.pNext = &largest;
        ZE_OK(zeKernelGetProperties(k, &p));
        EXPECT_EQ(largest.maxGroupSize, expected);
    }
}

TEST_F(ZeKernelQueries, ProfileInfoHasNoFlagAndNoToken) {
    zet_profile_properties_t p{ZET_STRUCTURE_TYPE_PROFILE_PROPERTIES, nullptr, ~0u, ~0u};
    ZE_OK(zetKernelGetProfileInfo(sized, &p));
    EXPECT_EQ(p.flags, 0u);
    EXPECT_EQ(p.numTokens, 0u);
    EXPECT_EQ(zetKernelGetProfileInfo(sized, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zetKernelGetProfileInfo(nullptr, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

}  // namespace
