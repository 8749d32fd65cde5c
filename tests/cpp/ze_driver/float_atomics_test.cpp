// Floating-point atomics through the loader: the device's ze_float_atomic_ext_properties_t
// and, where it claims them, kernels of tests/kernels/float_atomics/float_atomics.cl and half_atomics.cl
// giving exact results from many work-items (on the first device: CUDA where one exists).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "ze_fixture.hpp"

namespace {

using zetest::kForever;

constexpr uint32_t kAll = ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_LOAD_STORE | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD |
                          ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_MIN_MAX | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_LOAD_STORE |
                          ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD | ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_MIN_MAX;
constexpr uint32_t kGroups = 64;
constexpr uint32_t kGroupSize = 32;
constexpr uint32_t kItems = kGroups * kGroupSize;

class ZeFloatAtomics : public zetest::ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        atomics.stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES;
        module_properties.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
        module_properties.pNext = &atomics;
        ZE_OK(zeDeviceGetModuleProperties(device, &module_properties));
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        for (void** p : {&a, &b, &c}) {
            ZE_OK(zeMemAllocShared(context, &dd, &hd, kBytes, 64, device, p));
        }
    }

    void TearDown() override {
        for (ze_kernel_handle_t k : kernels) EXPECT_EQ(zeKernelDestroy(k), ZE_RESULT_SUCCESS);
        for (ze_module_handle_t m : modules) EXPECT_EQ(zeModuleDestroy(m), ZE_RESULT_SUCCESS);
        for (void* p : {a, b, c}) {
            if (p) {
                EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
            }
        }
        ZeDriver::TearDown();
    }

    // Runs kernel `name` of tests/kernels/<file>.spv over kGroups groups of kGroupSize with
    // the shared allocations a, b, c as its first `arguments` arguments, and waits.
    void run(const std::string& file, const char* name, uint32_t arguments) {
        std::ifstream in(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/" + file + ".spv", std::ios::binary);
        const std::vector<uint8_t> spirv{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
        ASSERT_FALSE(spirv.empty()) << file;
        ze_module_desc_t md{
            ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV, spirv.size(), spirv.data(), "", nullptr};
        ze_module_handle_t module = nullptr;
        ZE_OK(zeModuleCreate(context, device, &md, &module, nullptr));
        modules.push_back(module);
        ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
        ze_kernel_handle_t k = nullptr;
        ZE_OK(zeKernelCreate(module, &kd, &k));
        kernels.push_back(k);
        void* buffers[] = {a, b, c};
        for (uint32_t i = 0; i < arguments; ++i) ZE_OK(zeKernelSetArgumentValue(k, i, sizeof(void*), &buffers[i]));
        ZE_OK(zeKernelSetGroupSize(k, kGroupSize, 1, 1));
        const ze_group_count_t groups{kGroups, 1, 1};
        ze_event_handle_t done = make_events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE)[0];
        ZE_OK(zeCommandListAppendLaunchKernel(list, k, &groups, done, 0, nullptr));
        ZE_OK(zeEventHostSynchronize(done, kForever));
    }

    template <typename T>
    void expect_global(const char* name) {
        const std::vector<T> start{0, 0, 0, -1, 1e6, -1, -1, T(42.5), T(-0.0)};
        std::memcpy(a, start.data(), start.size() * sizeof(T));
        ASSERT_NO_FATAL_FAILURE(run("float_atomics", name, 3));
        const T* counters = static_cast<const T*>(a);
        const T n = kItems;
        EXPECT_EQ(counters[0], n);
        EXPECT_EQ(counters[1], n * (n - 1) / 2);
        EXPECT_EQ(counters[2], -n);
        EXPECT_EQ(counters[3], n - 1);
        EXPECT_EQ(counters[4], 0);
        EXPECT_TRUE(std::signbit(counters[8]));
        std::vector<T> olds(static_cast<const T*>(b), static_cast<const T*>(b) + kItems);
        std::sort(olds.begin(), olds.end());
        for (uint32_t i = 0; i < kItems; ++i) ASSERT_EQ(olds[i], T(i));
        const T* loads = static_cast<const T*>(c);
        EXPECT_EQ(std::count(loads, loads + kItems, T(42.5)), kItems);
    }

    template <typename T>
    void expect_local(const char* name) {
        ASSERT_NO_FATAL_FAILURE(run("float_atomics", name, 1));
        const T* totals = static_cast<const T*>(a);
        const T size = kGroupSize;
        for (uint32_t g = 0; g < kGroups; ++g) {
            EXPECT_EQ(totals[4 * g], size) << g;
            EXPECT_EQ(totals[4 * g + 1], size * (size - 1) / 2) << g;
            EXPECT_EQ(totals[4 * g + 2], 0) << g;
            EXPECT_EQ(totals[4 * g + 3], size - 1) << g;
        }
    }

    bool builds_spirv() const { return module_properties.spirvVersionSupported != 0; }

    ze_float_atomic_ext_properties_t atomics{};
    ze_device_module_properties_t module_properties{};
    void* a = nullptr;
    void* b = nullptr;
    void* c = nullptr;
    std::vector<ze_module_handle_t> modules;
    std::vector<ze_kernel_handle_t> kernels;
};

// As level-zero-tests' test_device asks: each type has a class of atomics (global or local
// load-store, add, min-max) on a device that builds kernels; zehal's compiler gives all.
TEST_F(ZeFloatAtomics, PropertiesNameWhatKernelsMayUse) {
    if (!builds_spirv()) {
        EXPECT_EQ(atomics.fp16Flags | atomics.fp32Flags | atomics.fp64Flags, 0u);
        GTEST_SKIP() << "the device builds no SPIR-V";
    }
    for (uint32_t flags : {atomics.fp16Flags, atomics.fp32Flags, atomics.fp64Flags}) {
        EXPECT_NE(flags & kAll, 0u);
        EXPECT_EQ(flags & ~kAll, 0u);
        if (zetest::is_sim(device)) {
            EXPECT_EQ(flags, kAll);
        }
    }
}

TEST_F(ZeFloatAtomics, FloatAndDoubleInGlobalMemory) {
    if (!builds_spirv() || (atomics.fp32Flags & atomics.fp64Flags & kAll) != kAll) {
        GTEST_SKIP() << "the device does not claim every atomic of float and double";
    }
    expect_global<float>("float_global");
    expect_global<double>("double_global");
}

TEST_F(ZeFloatAtomics, FloatAndDoubleInLocalMemory) {
    if (!builds_spirv() || (atomics.fp32Flags & atomics.fp64Flags & kAll) != kAll) {
        GTEST_SKIP() << "the device does not claim every atomic of float and double";
    }
    expect_local<float>("float_local");
    expect_local<double>("double_local");
}

// Half as raw bits: 0xbc00 is -1.0, 0x4000 2.0, 0x4fc0 31.0, 0x67ff 2047.0.
TEST_F(ZeFloatAtomics, HalfMinMaxLoadAndStore) {
    if (!builds_spirv() || (atomics.fp16Flags & kAll) != kAll) {
        GTEST_SKIP() << "the device does not claim every atomic of half";
    }
    const uint16_t start[] = {0xbc00, 0x67ff, 0xbc00, 0xbc00, 0x4000};  // -1, 2047, -1, -1, 2
    std::memcpy(a, start, sizeof start);
    ASSERT_NO_FATAL_FAILURE(run("half_atomics", "half_global", 2));
    const auto* counters = static_cast<const uint16_t*>(a);
    EXPECT_EQ(counters[0], 0x67ff);  // the largest id, 2047
    EXPECT_EQ(counters[1], 0);
    EXPECT_EQ(counters[4], 0x4000);
    const auto* loads = static_cast<const uint16_t*>(b);
    EXPECT_EQ(std::count(loads, loads + kItems, uint16_t{0x4000}), kItems);
    ASSERT_NO_FATAL_FAILURE(run("half_atomics", "half_local", 1));
    const auto* totals = static_cast<const uint16_t*>(a);
    for (uint32_t g = 0; g < kGroups; ++g) {
        EXPECT_EQ(totals[2 * g], 0) << g;
        EXPECT_EQ(totals[2 * g + 1], 0x4fc0) << g;  // 31
    }
}

}  // namespace
