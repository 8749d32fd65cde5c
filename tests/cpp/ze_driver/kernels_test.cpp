// Modules, kernels and launches through the loader (SEMANTICS §9, §12), with the SPIR-V
// kernels of tests/kernels built at build time. Skipped on a device that builds no SPIR-V
// (zehal built without the compiler).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "spirv_kernels.hpp"
#include "ze_fixture.hpp"

namespace {

using zetest::kForever;

class ZeKernels : public zetest::ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        if (!zetest::builds_spirv(device)) GTEST_SKIP() << "the device builds no SPIR-V";
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        ZE_OK(zeMemAllocShared(context, &dd, &hd, kBytes, 64, device, &shared));
        ZE_OK(zeMemAllocShared(context, &dd, &hd, kBytes, 64, device, &shared2));
    }

    void TearDown() override {
        for (ze_kernel_handle_t k : kernels) EXPECT_EQ(zeKernelDestroy(k), ZE_RESULT_SUCCESS);
        for (ze_module_handle_t m : modules) EXPECT_EQ(zeModuleDestroy(m), ZE_RESULT_SUCCESS);
        for (void* p : {shared, shared2}) {
            if (p) {
                EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
            }
        }
        ZeDriver::TearDown();
    }

    // zeModuleCreate of `bytes` in `format`; the build log's text into *log when given.
    ze_result_t create_module(const std::vector<uint8_t>& bytes, ze_module_handle_t* out, std::string* log = nullptr,
                              ze_module_format_t format = ZE_MODULE_FORMAT_IL_SPIRV) {
        ze_module_desc_t md{ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, format, bytes.size(), bytes.data(), "", nullptr};
        ze_module_build_log_handle_t bl = nullptr;
        const ze_result_t r = zeModuleCreate(context, device, &md, out, &bl);
        EXPECT_NE(bl, nullptr);
        if (bl) {
            size_t size = 0;
            EXPECT_EQ(zeModuleBuildLogGetString(bl, &size, nullptr), ZE_RESULT_SUCCESS);
            std::string text(size, '\0');
            EXPECT_EQ(zeModuleBuildLogGetString(bl, &size, text.data()), ZE_RESULT_SUCCESS);
            text.resize(size > 0 ? size - 1 : 0);
            if (log) *log = text;
            EXPECT_EQ(zeModuleBuildLogDestroy(bl), ZE_RESULT_SUCCESS);
        }
        if (r == ZE_RESULT_SUCCESS) modules.push_back(*out);
        return r;
    }

    // Kernel `name` of <file>.spv.
    ze_kernel_handle_t kernel(const std::string& file, const char* name) {
        ze_module_handle_t m = nullptr;
        std::string log;
        EXPECT_EQ(create_module(zetest::spirv_kernel(file), &m, &log), ZE_RESULT_SUCCESS) << log;
        ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, name};
        ze_kernel_handle_t k = nullptr;
        EXPECT_EQ(zeKernelCreate(m, &kd, &k), ZE_RESULT_SUCCESS);
        if (k) kernels.push_back(k);
        return k;
    }

    // fill_uint(dst, value) over `n` work-items in groups of one.
    ze_kernel_handle_t fill_kernel(void* dst, uint32_t value) {
        ze_kernel_handle_t k = kernel("buffers", "fill_uint");
        EXPECT_EQ(zeKernelSetArgumentValue(k, 0, sizeof dst, &dst), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeKernelSetArgumentValue(k, 1, sizeof value, &value), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeKernelSetGroupSize(k, 1, 1, 1), ZE_RESULT_SUCCESS);
        return k;
    }

    // Runs spec_constants(out) of a module built with `constants` (null: none) and reads out.
    std::vector<int64_t> run_spec_constants(const ze_module_constants_t* constants, void* out) {
        const std::vector<uint8_t> bytes = zetest::spirv_kernel("spec_constants");
        ze_module_desc_t md{ZE_STRUCTURE_TYPE_MODULE_DESC,
                            nullptr,
                            ZE_MODULE_FORMAT_IL_SPIRV,
                            bytes.size(),
                            bytes.data(),
                            "",
                            constants};
        ze_module_handle_t m = nullptr;
        EXPECT_EQ(zeModuleCreate(context, device, &md, &m, nullptr), ZE_RESULT_SUCCESS);
        if (!m) return {};
        ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "spec_constants"};
        ze_kernel_handle_t k = nullptr;
        EXPECT_EQ(zeKernelCreate(m, &kd, &k), ZE_RESULT_SUCCESS);
        std::memset(out, 0, 4 * sizeof(int64_t));
        EXPECT_EQ(zeKernelSetArgumentValue(k, 0, sizeof out, &out), ZE_RESULT_SUCCESS);
        const ze_group_count_t groups{1, 1, 1};
        EXPECT_EQ(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr), ZE_RESULT_SUCCESS);
        finish(list);
        EXPECT_EQ(zeKernelDestroy(k), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeModuleDestroy(m), ZE_RESULT_SUCCESS);
        const auto* values = static_cast<const int64_t*>(out);
        return {values[0], values[1], values[2], values[3]};
    }

    void* shared = nullptr;
    void* shared2 = nullptr;
    std::vector<ze_module_handle_t> modules;
    std::vector<ze_kernel_handle_t> kernels;
};

TEST_F(ZeKernels, ModuleListsItsKernelsAndProperties) {
    ze_module_handle_t m = nullptr;
    std::string log;
    ASSERT_EQ(create_module(zetest::spirv_kernel("buffers"), &m, &log), ZE_RESULT_SUCCESS) << log;
    uint32_t count = 0;
    ZE_OK(zeModuleGetKernelNames(m, &count, nullptr));
    std::vector<const char*> names(count);
    ZE_OK(zeModuleGetKernelNames(m, &count, names.data()));
    std::vector<std::string> got(names.begin(), names.end());
    EXPECT_NE(std::find(got.begin(), got.end(), "add_float"), got.end());
    EXPECT_NE(std::find(got.begin(), got.end(), "fill_uint"), got.end());
    ze_module_properties_t mp{ZE_STRUCTURE_TYPE_MODULE_PROPERTIES, nullptr, 0xFF};
    ZE_OK(zeModuleGetProperties(m, &mp));
    EXPECT_EQ(mp.flags, 0u);
    void* fn = nullptr;
    EXPECT_EQ(zeModuleGetFunctionPointer(m, "add_float", &fn), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);

    ze_kernel_handle_t k = kernel("buffers", "add_int_constant");
    ze_kernel_properties_t kp{};
    kp.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    ZE_OK(zeKernelGetProperties(k, &kp));
    EXPECT_EQ(kp.numKernelArgs, 3u);
    size_t size = 0;
    ZE_OK(zeKernelGetName(k, &size, nullptr));
    std::string name(size, '\0');
    ZE_OK(zeKernelGetName(k, &size, name.data()));
    EXPECT_STREQ(name.c_str(), "add_int_constant");
}

TEST_F(ZeKernels, NativeBinaryBuildsTheSameModule) {
    ze_module_handle_t m = nullptr;
    ASSERT_EQ(create_module(zetest::spirv_kernel("buffers"), &m), ZE_RESULT_SUCCESS);
    size_t size = 0;
    ZE_OK(zeModuleGetNativeBinary(m, &size, nullptr));
    ASSERT_GT(size, 0u);
    std::vector<uint8_t> binary(size);
    size_t small = size - 1;
    EXPECT_EQ(zeModuleGetNativeBinary(m, &small, binary.data()), ZE_RESULT_ERROR_INVALID_SIZE);
    ZE_OK(zeModuleGetNativeBinary(m, &size, binary.data()));
    ze_module_handle_t again = nullptr;
    std::string log;
    ASSERT_EQ(create_module(binary, &again, &log, ZE_MODULE_FORMAT_NATIVE), ZE_RESULT_SUCCESS) << log;
    uint32_t a = 0, b = 0;
    ZE_OK(zeModuleGetKernelNames(m, &a, nullptr));
    ZE_OK(zeModuleGetKernelNames(again, &b, nullptr));
    EXPECT_EQ(a, b);
    // A kernel of the native module has the SPIR-V kernel's arguments (none of what the
    // backend adds, such as CUDA's global offset), and runs as it does.
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "fill_uint"};
    ze_kernel_handle_t k = nullptr;
    ZE_OK(zeKernelCreate(again, &kd, &k));
    kernels.push_back(k);
    ze_kernel_properties_t kp{};
    kp.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    ZE_OK(zeKernelGetProperties(k, &kp));
    EXPECT_EQ(kp.numKernelArgs, 2u);
    auto* words = static_cast<uint32_t*>(shared);
    std::memset(words, 0, 4 * sizeof(uint32_t));
    const uint32_t value = 5;
    ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof shared, &shared));
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof value, &value));
    ZE_OK(zeKernelSetGroupSize(k, 1, 1, 1));
    const ze_group_count_t groups{4, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr));
    finish(list);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(words[i], 5u) << i;
}

TEST_F(ZeKernels, BadBinariesFailWithABuildLog) {
    const std::vector<uint8_t> good = zetest::spirv_kernel("buffers");
    const std::vector<std::vector<uint8_t>> bad = {
        {'n', 'o', 't', ' ', 's', 'p', 'i', 'r', '-', 'v', 0, 0},
        std::vector<uint8_t>(good.begin(), good.begin() + static_cast<long>(good.size() / 2)),
    };
    for (const auto& bytes : bad) {
        auto m = reinterpret_cast<ze_module_handle_t>(uintptr_t{0x1234});
        std::string log;
        EXPECT_EQ(create_module(bytes, &m, &log), ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
        EXPECT_FALSE(log.empty());
        EXPECT_EQ(m, reinterpret_cast<ze_module_handle_t>(uintptr_t{0x1234}));  // untouched
    }
    ze_module_desc_t md{
        ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV, 0, good.data(), nullptr, nullptr};
    ze_module_handle_t m = nullptr;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &m, nullptr), ZE_RESULT_ERROR_INVALID_SIZE);
    md.inputSize = good.size();
    md.format = static_cast<ze_module_format_t>(7);
    EXPECT_EQ(zeModuleCreate(context, device, &md, &m, nullptr), ZE_RESULT_ERROR_INVALID_ENUMERATION);
}

TEST_F(ZeKernels, KernelErrorsAreTheSpecifications) {
    ze_module_handle_t m = nullptr;
    ASSERT_EQ(create_module(zetest::spirv_kernel("buffers"), &m), ZE_RESULT_SUCCESS);
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "no_such_kernel"};
    ze_kernel_handle_t k = nullptr;
    EXPECT_EQ(zeKernelCreate(m, &kd, &k), ZE_RESULT_ERROR_INVALID_KERNEL_NAME);

    k = kernel("buffers", "fill_uint");
    const uint32_t value = 1;
    EXPECT_EQ(zeKernelSetArgumentValue(k, 2, sizeof value, &value), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX);
    EXPECT_EQ(zeKernelSetArgumentValue(k, 0, 4, &value), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE);

    ze_device_compute_properties_t cp{};
    cp.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    ZE_OK(zeDeviceGetComputeProperties(device, &cp));
    EXPECT_GT(cp.maxTotalGroupSize, 1u);
    EXPECT_EQ(zeKernelSetGroupSize(k, cp.maxGroupSizeX + 1, 1, 1), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    EXPECT_EQ(zeKernelSetGroupSize(k, 0, 1, 1), ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    uint32_t x = 0, y = 0, z = 0;
    ZE_OK(zeKernelSuggestGroupSize(k, 96, 1, 1, &x, &y, &z));
    EXPECT_EQ(96u % x, 0u);
    EXPECT_EQ(zeKernelSuggestGroupSize(k, 0, 1, 1, &x, &y, &z), ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION);

    // Argument 0 never set: the launch is refused, at append, on both kinds of list.
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof value, &value));
    const ze_group_count_t groups{4, 1, 1};
    EXPECT_EQ(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    EXPECT_EQ(zeCommandListAppendLaunchKernel(regular, k, &groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeCommandListAppendLaunchKernel(regular, k, nullptr, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ZE_OK(zeCommandListDestroy(regular));
}

TEST_F(ZeKernels, ImmediateLaunchComputesAndTimesTheKernel) {
    constexpr uint32_t n = 256;
    auto* in = static_cast<int32_t*>(shared);
    for (uint32_t i = 0; i < n; ++i) in[i] = static_cast<int32_t>(i);
    std::memset(shared2, 0, n * sizeof(int32_t));
    ze_kernel_handle_t k = kernel("buffers", "add_int_constant");
    const int32_t add = 7;
    ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof shared, &shared));
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof shared2, &shared2));
    ZE_OK(zeKernelSetArgumentValue(k, 2, sizeof add, &add));
    ZE_OK(zeKernelSetGroupSize(k, 32, 1, 1));
    ze_event_handle_t done = make_events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP)[0];
    const ze_group_count_t groups{n / 32, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, k, &groups, done, 0, nullptr));
    ZE_OK(zeEventHostSynchronize(done, kForever));
    const auto* out = static_cast<const int32_t*>(shared2);
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], static_cast<int32_t>(i) + add) << i;
    ze_kernel_timestamp_result_t ts{};
    ZE_OK(zeEventQueryKernelTimestamp(done, &ts));
    EXPECT_LE(ts.global.kernelStart, ts.global.kernelEnd);
}

// System memory is a kernel's pointer argument where the device says it takes it
// (sharedSystemAllocCapabilities), and a launch with it is refused where it does not.
TEST_F(ZeKernels, SystemMemoryIsAKernelArgumentWhereTheDeviceReportsIt) {
    ze_device_memory_access_properties_t access{};
    access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
    ZE_OK(zeDeviceGetMemoryAccessProperties(device, &access));
    std::vector<uint32_t> words(64, 0);  // the heap: no allocation of the driver's
    ze_kernel_handle_t k = fill_kernel(words.data(), 9);
    const ze_group_count_t groups{2, 1, 1};
    ze_event_handle_t done = make_events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE)[0];
    const ze_result_t r = zeCommandListAppendLaunchKernel(list, k, &groups, done, 0, nullptr);
    if (!(access.sharedSystemAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW)) {
        EXPECT_EQ(r, ZE_RESULT_ERROR_INVALID_ARGUMENT);
        GTEST_SKIP() << "the device's kernels take no system memory";
    }
    ZE_OK(r);
    ZE_OK(zeEventHostSynchronize(done, kForever));
    for (size_t i = 0; i < words.size(); ++i) EXPECT_EQ(words[i], i < 2 ? 9u : 0u) << i;
}

// Integers of a width that is no byte multiple (ArbitraryPrecisionIntegersINTEL, as a
// compiler's optimiser may leave in a byte loop) build and compute.
TEST_F(ZeKernels, SevenBitIntegersWrapAt128) {
    auto* out = static_cast<uint8_t*>(shared);
    std::memset(out, 0xff, 300);
    ze_kernel_handle_t k = kernel("seven_bits", "wrap_seven_bits");
    const uint32_t count = 300;
    ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof shared, &shared));
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof count, &count));
    ZE_OK(zeKernelSetGroupSize(k, 1, 1, 1));
    const ze_group_count_t groups{1, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr));
    finish(list);
    for (uint32_t i = 0; i < count; ++i) ASSERT_EQ(out[i], (37 * i) % 128) << i;
}

TEST_F(ZeKernels, RegularListKeepsTheArgumentsOfItsAppend) {
    auto* words = static_cast<uint32_t*>(shared);
    std::memset(words, 0, 4 * sizeof(uint32_t));
    ze_kernel_handle_t k = fill_kernel(shared, 1);
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    const ze_group_count_t groups{4, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(regular, k, &groups, nullptr, 0, nullptr));
    const uint32_t later = 2;
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof later, &later));  // after the append: not the launch's
    ZE_OK(zeCommandListClose(regular));
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
    ZE_OK(zeCommandQueueSynchronize(queue, kForever));
    for (int i = 0; i < 4; ++i) EXPECT_EQ(words[i], 1u) << i;
    ZE_OK(zeCommandQueueDestroy(queue));
    ZE_OK(zeCommandListDestroy(regular));
}

// A group count over the device's maximum is refused at append on both kinds of list, as
// every other argument of a launch is (the queue's rule, hal::check_launch).
TEST_F(ZeKernels, GroupCountsOverTheMaximumAreRefusedAtAppend) {
    ze_device_compute_properties_t cp{};
    cp.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    ZE_OK(zeDeviceGetComputeProperties(device, &cp));
    if (cp.maxGroupCountY == UINT32_MAX) GTEST_SKIP() << "every group count fits this device";
    ze_kernel_handle_t k = fill_kernel(shared, 1);
    const ze_group_count_t groups{1, cp.maxGroupCountY + 1, 1};
    EXPECT_EQ(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    EXPECT_EQ(zeCommandListAppendLaunchKernel(regular, k, &groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION);
    ZE_OK(zeCommandListDestroy(regular));
}

// A pointer argument no command of the device may touch (pages not mapped) is refused at
// append on both kinds of list, as a queue refuses it (hal::check_launch_arguments).
TEST_F(ZeKernels, PointerArgumentsNoCommandMayTouchAreRefusedAtAppend) {
    ze_kernel_handle_t k = kernel("buffers", "fill_uint");
    const uint32_t value = 1;
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof value, &value));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    // Unmapped last, so that nothing made here maps the page again before the appends.
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* gone = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(gone, MAP_FAILED);
    ASSERT_EQ(munmap(gone, page), 0);
    ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof gone, &gone));
    const ze_group_count_t groups{1, 1, 1};
    EXPECT_EQ(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeCommandListAppendLaunchKernel(regular, k, &groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // The same kernel with memory of the device is recorded.
    ZE_OK(zeKernelSetArgumentValue(k, 0, sizeof shared, &shared));
    ZE_OK(zeCommandListAppendLaunchKernel(regular, k, &groups, nullptr, 0, nullptr));
    ZE_OK(zeCommandListDestroy(regular));
}

// Programs pass a size_t for an int (level-zero-tests' KernelCopyTests do): the low bytes
// are the argument, as on Intel's driver.
TEST_F(ZeKernels, WiderValueArgumentTakesItsLowBytes) {
    std::memset(shared, 0, 4 * sizeof(uint32_t));
    ze_kernel_handle_t k = fill_kernel(shared, 0);
    const uint64_t wide = 0x1234;
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof wide, &wide));
    const ze_group_count_t groups{4, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr));
    finish(list);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<const uint32_t*>(shared)[i], 0x1234u) << i;
}

// A by-value argument given fewer bytes than it has takes them as its low bytes, zeros above
// (a uint32_t for a size_t, as level-zero-tests passes one).
TEST_F(ZeKernels, NarrowerValueArgumentTakesItsLowBytesAndZerosAbove) {
    std::memset(shared, 0xFF, 4 * sizeof(uint32_t));
    ze_kernel_handle_t k = fill_kernel(shared, 0xAAAAAAAAu);
    const uint16_t narrow = 0x1234;
    ZE_OK(zeKernelSetArgumentValue(k, 1, sizeof narrow, &narrow));
    const ze_group_count_t groups{4, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, k, &groups, nullptr, 0, nullptr));
    finish(list);
    for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<const uint32_t*>(shared)[i], 0x1234u) << i;
}

// Indirect launches read their group counts in queue order on the device's side; CUDA
// cannot (docs/kernels.md): true, with a note, when this device refuses for that reason.
bool indirect_refused_by_cuda(ze_device_handle_t device, ze_result_t r) {
    if (r != ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) return false;
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    EXPECT_EQ(zeDeviceGetProperties(device, &props), ZE_RESULT_SUCCESS);
    return std::string(props.name).rfind("NVIDIA", 0) == 0;
}

// The counts are read when the launch runs: a copy into them queued before the launch, held
// back by an event until both are appended, decides how many groups run.
TEST_F(ZeKernels, IndirectLaunchReadsItsGroupCountsWhenItRuns) {
    auto* words = static_cast<uint32_t*>(shared);
    std::memset(words, 0, 64 * sizeof(uint32_t));
    ze_kernel_handle_t k = fill_kernel(shared, 3);
    const ze_group_count_t initial{1, 1, 1}, later{12, 1, 1};
    std::memcpy(host, &later, sizeof later);
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, &initial, sizeof initial, nullptr, 0, nullptr));
    finish(list);
    std::vector<ze_event_handle_t> events = make_events(2);
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, host, sizeof later, nullptr, 1, &events[0]));
    const ze_result_t r = zeCommandListAppendLaunchKernelIndirect(list, k, static_cast<const ze_group_count_t*>(dev),
                                                                  events[1], 0, nullptr);
    ZE_OK(zeEventHostSignal(events[0]));
    if (indirect_refused_by_cuda(device, r)) GTEST_SKIP() << "indirect launches are not supported on CUDA";
    ZE_OK(r);
    ZE_OK(zeEventHostSynchronize(events[1], kForever));
    for (uint32_t i = 0; i < 64; ++i) ASSERT_EQ(words[i], i < 12 ? 3u : 0u) << i;
}

// A regular list's indirect launch of several kernels reads the kernel count and the group
// counts at each execution, not at its append.
TEST_F(ZeKernels, RegularListReadsIndirectCountsAtEachExecution) {
    auto* a = static_cast<uint32_t*>(shared);
    auto* b = static_cast<uint32_t*>(shared2);
    ze_kernel_handle_t kernels[] = {fill_kernel(shared, 1), fill_kernel(shared2, 2)};
    auto* counts = static_cast<ze_group_count_t*>(host);
    auto* count = reinterpret_cast<uint32_t*>(counts + 2);
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    const ze_result_t r = zeCommandListAppendLaunchMultipleKernelsIndirect(regular, 2, kernels, count, counts, nullptr,
                                                                           0, nullptr);
    if (indirect_refused_by_cuda(device, r)) {
        ZE_OK(zeCommandListDestroy(regular));
        GTEST_SKIP() << "indirect launches are not supported on CUDA";
    }
    ZE_OK(r);
    ZE_OK(zeCommandListClose(regular));
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    struct Round {
        uint32_t count, groups_a, groups_b;
    };
    for (const Round round : {Round{1, 3, 5}, Round{2, 4, 6}}) {
        std::memset(a, 0, 16 * sizeof(uint32_t));
        std::memset(b, 0, 16 * sizeof(uint32_t));
        *count = round.count;
        counts[0] = {round.groups_a, 1, 1};
        counts[1] = {round.groups_b, 1, 1};
        ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
        ZE_OK(zeCommandQueueSynchronize(queue, kForever));
        const uint32_t ran_b = round.count >= 2 ? round.groups_b : 0;
        for (uint32_t i = 0; i < 16; ++i) {
            ASSERT_EQ(a[i], i < round.groups_a ? 1u : 0u) << round.count << " " << i;
            ASSERT_EQ(b[i], i < ran_b ? 2u : 0u) << round.count << " " << i;
        }
    }
    ZE_OK(zeCommandQueueDestroy(queue));
    ZE_OK(zeCommandListDestroy(regular));
}

TEST_F(ZeKernels, IndirectLaunchBadInput) {
    ze_kernel_handle_t k = fill_kernel(shared, 1);
    const auto* groups = static_cast<const ze_group_count_t*>(host);
    const auto* count = reinterpret_cast<const uint32_t*>(static_cast<const uint8_t*>(host) + 64);
    EXPECT_EQ(zeCommandListAppendLaunchKernelIndirect(list, k, nullptr, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendLaunchKernelIndirect(list, nullptr, groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendLaunchMultipleKernelsIndirect(list, 1, &k, nullptr, groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendLaunchMultipleKernelsIndirect(list, 1, nullptr, count, groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendLaunchMultipleKernelsIndirect(list, 0, &k, count, groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_SIZE);
    const auto* misaligned = reinterpret_cast<const ze_group_count_t*>(static_cast<const uint8_t*>(host) + 2);
    EXPECT_EQ(zeCommandListAppendLaunchKernelIndirect(list, k, misaligned, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_command_list_handle_t copy_list = immediate_list(1);
    ASSERT_NE(copy_list, nullptr);
    EXPECT_EQ(zeCommandListAppendLaunchKernelIndirect(copy_list, k, groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeCommandListDestroy(copy_list));
}

// Specialization constants replace the defaults of the constants named; the others keep
// theirs, and a module built without constants afterwards has every default again.
TEST_F(ZeKernels, SpecializationConstantsSetTheModulesValues) {
    const uint64_t wide = 1234;
    const int16_t narrow = -5;
    const bool truth = true;
    uint32_t ids[] = {0, 2, 3};
    const void* values[] = {&wide, &narrow, &truth};
    const ze_module_constants_t constants{3, ids, values};
    EXPECT_EQ(run_spec_constants(&constants, shared), (std::vector<int64_t>{1234, 30, -5, 1}));
    EXPECT_EQ(run_spec_constants(nullptr, shared), (std::vector<int64_t>{10, 30, -3, 0}));
    const uint32_t small = 77;
    uint32_t one_id[] = {1};
    const void* one_value[] = {&small};
    const ze_module_constants_t one{1, one_id, one_value};
    EXPECT_EQ(run_spec_constants(&one, shared), (std::vector<int64_t>{10, 77, -3, 0}));
}

TEST_F(ZeKernels, SpecializationConstantsBadInput) {
    const std::vector<uint8_t> bytes = zetest::spirv_kernel("spec_constants");
    const uint64_t value = 1;
    uint32_t missing[] = {7};
    const void* values[] = {&value};
    ze_module_constants_t constants{1, missing, values};
    ze_module_desc_t md{
        ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV, bytes.size(), bytes.data(), "", &constants};
    ze_module_handle_t m = nullptr;
    ze_module_build_log_handle_t log = nullptr;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &m, &log), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(m, nullptr);
    ASSERT_NE(log, nullptr);
    size_t size = 0;
    ZE_OK(zeModuleBuildLogGetString(log, &size, nullptr));
    std::string text(size, '\0');
    ZE_OK(zeModuleBuildLogGetString(log, &size, text.data()));
    EXPECT_NE(text.find("specialization constant 7"), std::string::npos) << text;
    ZE_OK(zeModuleBuildLogDestroy(log));
    constants.pConstantIds = nullptr;
    EXPECT_EQ(zeModuleCreate(context, device, &md, &m, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    uint32_t present[] = {0};
    const void* null_value[] = {nullptr};
    constants = {1, present, null_value};
    EXPECT_EQ(zeModuleCreate(context, device, &md, &m, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(m, nullptr);
}

// Program-scope variables (tests/kernels/globals.cl) are device memory of the module's
// device: copies read and write them, kernels see what the copies wrote, a pointer to one
// is a kernel argument like any device pointer, and each module has its own.
TEST_F(ZeKernels, GlobalPointersAreDeviceMemoryOfTheModule) {
    ze_module_handle_t m = nullptr;
    std::string log;
    ASSERT_EQ(create_module(zetest::spirv_kernel("globals"), &m, &log), ZE_RESULT_SUCCESS) << log;
    size_t size = 0;
    void* counter = nullptr;
    ZE_OK(zeModuleGetGlobalPointer(m, "counter", &size, &counter));
    EXPECT_EQ(size, sizeof(int32_t));
    ASSERT_NE(counter, nullptr);
    if (zetest::is_sim(device)) {  // registered with the sim device (CUDA's is the driver's memory)
        ze_memory_allocation_properties_t ap{};
        ap.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
        ze_device_handle_t owner = nullptr;
        ZE_OK(zeMemGetAllocProperties(context, counter, &ap, &owner));
        EXPECT_EQ(ap.type, ZE_MEMORY_TYPE_DEVICE);
        EXPECT_EQ(owner, device);
    }

    // The initial value, read by a copy; then a kernel reads and bumps it.
    auto* out = static_cast<int32_t*>(shared);
    out[0] = 0;
    ZE_OK(zeCommandListAppendMemoryCopy(list, shared, counter, sizeof(int32_t), nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(out[0], 5);
    ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "bump_counter"};
    ze_kernel_handle_t bump = nullptr;
    ZE_OK(zeKernelCreate(m, &kd, &bump));
    kernels.push_back(bump);
    ZE_OK(zeKernelSetArgumentValue(bump, 0, sizeof shared2, &shared2));
    const ze_group_count_t one{1, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, bump, &one, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, shared, counter, sizeof(int32_t), nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(static_cast<int32_t*>(shared2)[0], 5);
    EXPECT_EQ(out[0], 6);
    // A value copied in is what the next launch reads.
    out[1] = 40;
    ZE_OK(zeCommandListAppendMemoryCopy(list, counter, &out[1], sizeof(int32_t), nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendLaunchKernel(list, bump, &one, nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(static_cast<int32_t*>(shared2)[0], 40);

    // A writable array and a __constant table, the array filled by a kernel given its address.
    void* weights = nullptr;
    void* table = nullptr;
    ZE_OK(zeModuleGetGlobalPointer(m, "weights", &size, &weights));
    EXPECT_EQ(size, 4 * sizeof(float));
    ZE_OK(zeModuleGetGlobalPointer(m, "table", &size, &table));
    EXPECT_EQ(size, 8 * sizeof(uint32_t));
    ze_kernel_handle_t fill = kernel("buffers", "fill_uint");
    const uint32_t two = 0x40000000u;  // 2.0f
    ZE_OK(zeKernelSetArgumentValue(fill, 0, sizeof weights, &weights));
    ZE_OK(zeKernelSetArgumentValue(fill, 1, sizeof two, &two));
    ZE_OK(zeKernelSetGroupSize(fill, 1, 1, 1));
    const ze_group_count_t four{4, 1, 1};
    ZE_OK(zeCommandListAppendLaunchKernel(list, fill, &four, nullptr, 0, nullptr));
    kd.pKernelName = "weigh_table";
    ze_kernel_handle_t weigh = nullptr;
    ZE_OK(zeKernelCreate(m, &kd, &weigh));
    kernels.push_back(weigh);
    ZE_OK(zeKernelSetArgumentValue(weigh, 0, sizeof shared2, &shared2));
    ZE_OK(zeKernelSetGroupSize(weigh, 8, 1, 1));
    ZE_OK(zeCommandListAppendLaunchKernel(list, weigh, &one, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, shared, table, 8 * sizeof(uint32_t), nullptr, 0, nullptr));
    finish(list);
    const uint32_t fibonacci[8] = {1, 2, 3, 5, 8, 13, 21, 34};
    for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(static_cast<uint32_t*>(shared)[i], fibonacci[i]) << i;
        EXPECT_EQ(static_cast<float*>(shared2)[i], 2.0f * static_cast<float>(fibonacci[i])) << i;
    }

    // Another module of the same SPIR-V has variables of its own, at their initial values.
    ze_module_handle_t other = nullptr;
    ASSERT_EQ(create_module(zetest::spirv_kernel("globals"), &other), ZE_RESULT_SUCCESS);
    void* other_counter = nullptr;
    ZE_OK(zeModuleGetGlobalPointer(other, "counter", nullptr, &other_counter));
    EXPECT_NE(other_counter, counter);
    ZE_OK(zeCommandListAppendMemoryCopy(list, shared, other_counter, sizeof(int32_t), nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(out[0], 5);
}

// The specification's errors: a name the module does not export, a null name; the outputs
// are optional. A variable is the module's: freeing it is refused.
TEST_F(ZeKernels, GlobalPointerBadInput) {
    ze_module_handle_t m = nullptr;
    ASSERT_EQ(create_module(zetest::spirv_kernel("globals"), &m), ZE_RESULT_SUCCESS);
    size_t size = 7;
    void* p = reinterpret_cast<void*>(uintptr_t{0x1000});
    EXPECT_EQ(zeModuleGetGlobalPointer(m, "no_such_variable", &size, &p), ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
    EXPECT_EQ(zeModuleGetGlobalPointer(m, "bump_counter", &size, &p), ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
    EXPECT_EQ(size, 7u);  // untouched
    EXPECT_EQ(zeModuleGetGlobalPointer(m, nullptr, &size, &p), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeModuleGetGlobalPointer(nullptr, "counter", &size, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeModuleGetGlobalPointer(m, "counter", nullptr, nullptr), ZE_RESULT_SUCCESS);
    ZE_OK(zeModuleGetGlobalPointer(m, "counter", nullptr, &p));
    EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // A module without program-scope variables has none.
    ze_module_handle_t plain = nullptr;
    ASSERT_EQ(create_module(zetest::spirv_kernel("buffers"), &plain), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeModuleGetGlobalPointer(plain, "counter", &size, &p), ZE_RESULT_ERROR_INVALID_GLOBAL_NAME);
}

TEST_F(ZeKernels, CopyEnginesRunNoKernels) {
    ze_kernel_handle_t k = fill_kernel(shared, 1);
    ze_command_list_handle_t copy_list = immediate_list(1);
    ASSERT_NE(copy_list, nullptr);
    const ze_group_count_t groups{1, 1, 1};
    EXPECT_EQ(zeCommandListAppendLaunchKernel(copy_list, k, &groups, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeCommandListDestroy(copy_list));
}

TEST_F(ZeKernels, DestroyedHandlesAreRefused) {
    ze_kernel_handle_t k = kernel("buffers", "fill_uint");
    kernels.clear();
    ZE_OK(zeKernelDestroy(k));
    EXPECT_EQ(zeKernelDestroy(k), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    const uint32_t v = 0;
    EXPECT_EQ(zeKernelSetArgumentValue(k, 1, sizeof v, &v), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ze_module_handle_t m = modules.back();
    modules.pop_back();
    ZE_OK(zeModuleDestroy(m));
    uint32_t count = 0;
    EXPECT_EQ(zeModuleGetKernelNames(m, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

}  // namespace
