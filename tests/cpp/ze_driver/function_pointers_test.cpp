// zeModuleGetFunctionPointer through the loader, with function_pointers.cl: a kernel calls
// the function whose address the host passes it, and functions whose addresses it takes
// itself; a function that reaches a barrier, and a kernel, have no address. On a device
// whose kernels cannot call through pointers (CUDA: docs/kernels.md) the test skips.
#include <cstring>
#include <string>
#include <vector>

#include "spirv_kernels.hpp"
#include "ze_fixture.hpp"

namespace {

constexpr uint32_t kItems = 8;

class ZeFunctionPointers : public zetest::ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        if (!zetest::builds_spirv(device)) GTEST_SKIP() << "the device builds no SPIR-V";
        const std::vector<uint8_t> spirv = zetest::spirv_kernel("function_pointers");
        ASSERT_FALSE(spirv.empty());
        ZE_OK(zetest::create_spirv_module(context, device, spirv, "-ze-take-global-address -ze-library-compilation",
                                          &module));
        void* probe = nullptr;
        if (zeModuleGetFunctionPointer(module, "add_one", &probe) == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE)
            GTEST_SKIP() << "the device's kernels cannot call through pointers";
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        ZE_OK(zeMemAllocShared(context, &dd, &hd, kItems * sizeof(int32_t), 64, device, &out));
    }

    void TearDown() override {
        if (out) {
            EXPECT_EQ(zeMemFree(context, out), ZE_RESULT_SUCCESS);
        }
        if (module) {
            EXPECT_EQ(zeModuleDestroy(module), ZE_RESULT_SUCCESS);
        }
        ZeDriver::TearDown();
    }

    // Runs kernel `name` over kItems work-items in groups of 4, its arguments the bytes of
    // `args` (each a pointer to its value and its size); returns what it wrote.
    std::vector<int32_t> run(const char* name, const std::vector<std::pair<const void*, size_t>>& args) {
        ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
        ze_kernel_handle_t k = nullptr;
        EXPECT_EQ(zeKernelCreate(module, &kd, &k), ZE_RESULT_SUCCESS);
        if (!k) return {};
        for (uint32_t i = 0; i < args.size(); ++i)
            EXPECT_EQ(zeKernelSetArgumentValue(k, i, args[i].second, args[i].first), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeKernelSetGroupSize(k, 4, 1, 1), ZE_RESULT_SUCCESS);
        std::memset(out, 0, kItems * sizeof(int32_t));
        const ze_group_count_t groups{kItems / 4, 1, 1};
        EXPECT_EQ(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
        finish(list);
        EXPECT_EQ(zeKernelDestroy(k), ZE_RESULT_SUCCESS);
        const auto* values = static_cast<const int32_t*>(out);
        return {values, values + kItems};
    }

    ze_module_handle_t module = nullptr;
    void* out = nullptr;
};

TEST_F(ZeFunctionPointers, AKernelCallsTheFunctionItIsGiven) {
    void* add_one = nullptr;
    ZE_OK(zeModuleGetFunctionPointer(module, "add_one", &add_one));
    ASSERT_NE(add_one, nullptr);
    const auto f = static_cast<int64_t>(reinterpret_cast<uintptr_t>(add_one));
    std::vector<int32_t> got = run("call_pointer", {{&f, sizeof f}, {&out, sizeof out}});
    for (uint32_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int32_t>(i * 10 + 1)) << i;
    // A function that reads its work-item's id, called through a pointer, reads the caller's.
    void* add_global_id = nullptr;
    ZE_OK(zeModuleGetFunctionPointer(module, "add_global_id", &add_global_id));
    const auto g = static_cast<int64_t>(reinterpret_cast<uintptr_t>(add_global_id));
    got = run("call_pointer", {{&g, sizeof g}, {&out, sizeof out}});
    for (uint32_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int32_t>(i * 11)) << i;
}

// Pointers the kernel takes itself (SPIR-V's constant function pointers), in a kernel that
// also reaches a barrier (each work-item a coroutine).
TEST_F(ZeFunctionPointers, AKernelCallsThePointersItTakes) {
    const std::vector<int32_t> got = run("call_own_pointers", {{&out, sizeof out}});
    for (uint32_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], static_cast<int32_t>(i % 2 ? 100 + i : 101)) << i;
}

TEST_F(ZeFunctionPointers, OnlyFunctionsKernelsCanCallHaveAnAddress) {
    void* f = nullptr;
    // A work-item cannot suspend at a barrier inside a call through a pointer.
    EXPECT_EQ(zeModuleGetFunctionPointer(module, "after_barrier", &f), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(zeModuleGetFunctionPointer(module, "call_pointer", &f), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    EXPECT_EQ(zeModuleGetFunctionPointer(module, "no_such_function", &f), ZE_RESULT_ERROR_INVALID_FUNCTION_NAME);
    EXPECT_EQ(zeModuleGetFunctionPointer(module, "add_one", nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeModuleGetFunctionPointer(module, nullptr, &f), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(f, nullptr);
}

}  // namespace
