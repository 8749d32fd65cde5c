// Descriptors and property structures as real programs pass them (SEMANTICS §9): output
// structures left uninitialised are filled, never walked; a wrong stype in a base
// descriptor is ignored; unknown chain links are skipped; every flag bit is accepted, hints
// ignored and defined selectors honoured.
#include <dlfcn.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "first_metric_group.hpp"
#include "ze_fixture.hpp"

namespace zetest {
namespace {

// A pNext no program could dereference, and stypes that are none the functions expect;
// 0xA5A5A5A5, what uninitialised memory often holds, is outside ze_structure_type_t's range.
const auto kGarbageNext = reinterpret_cast<void*>(uintptr_t{0xdeadbeef});
constexpr uint32_t kWrongStypes[] = {0x7fff1234u, ZE_STRUCTURE_TYPE_CONTEXT_DESC, 0, 0xA5A5A5A5u};

template <typename T>
T with_garbage_head(uint32_t stype) {
    T s;
    std::memset(static_cast<void*>(&s), 0xA5, sizeof s);
    std::memcpy(static_cast<void*>(&s), &stype, sizeof stype);
    s.pNext = kGarbageNext;
    return s;
}

using DescriptorsTest = ZeDriver;

// Property structures with a garbage head (stype and pNext): filled, the chain never
// followed. In a fresh child process (gtest's threadsafe death-test style re-runs the test
// there, so neither the driver's threads nor CUDA are forked): following the garbage pNext
// kills it, and an alarm ends it should it hang.
TEST_F(DescriptorsTest, UninitialisedOutputStructuresAreFilledNotWalked) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ze_device_handle_t metric_device = nullptr;
    zet_metric_group_handle_t group = nullptr;
    zet_metric_handle_t metric = nullptr;
    if (first_metric_group(devices, &metric_device, &group)) {
        uint32_t n = 1;
        ZE_OK(zetMetricGet(group, &n, &metric));
    }
    const auto fill_all = [&] {
        for (uint32_t stype : kWrongStypes) {
            auto p = with_garbage_head<ze_device_properties_t>(stype);
            if (zeDeviceGetProperties(device, &p) != ZE_RESULT_SUCCESS) return 1;
            if (p.type != ZE_DEVICE_TYPE_GPU || p.timestampValidBits == 0 || std::strlen(p.name) == 0) return 2;
            auto gp = with_garbage_head<zet_metric_group_properties_t>(stype);
            if (group && (zetMetricGroupGetProperties(group, &gp) != ZE_RESULT_SUCCESS || gp.metricCount == 0))
                return 3;
            auto mp = with_garbage_head<zet_metric_properties_t>(stype);
            if (metric && (zetMetricGetProperties(metric, &mp) != ZE_RESULT_SUCCESS || std::strlen(mp.name) == 0))
                return 4;
            // An input descriptor of the one function that reads a chain.
            auto dd = with_garbage_head<ze_device_mem_alloc_desc_t>(stype);
            dd.flags = 0;
            dd.ordinal = 0;
            void* p_dev = nullptr;
            if (zeMemAllocDevice(context, &dd, 4096, 0, device, &p_dev) != ZE_RESULT_SUCCESS) return 5;
            if (zeMemFree(context, p_dev) != ZE_RESULT_SUCCESS) return 6;
        }
        return 0;
    };
    EXPECT_EXIT(
        {
            alarm(60);
            _exit(fill_all());
        },
        ::testing::ExitedWithCode(0), "");
}

// A value-initialised structure (`T x = {}`: stype 0) with only pNext set, as much C++ code
// and level-zero-tests write it: its chain is followed. A stype-0 head whose pNext leads
// into readable garbage, unreadable or unmapped memory is filled all the same and the walk
// stops there: in a fresh child, as above.
TEST_F(DescriptorsTest, ZeroInitialisedHeadsHaveTheirChainFollowed) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    ze_device_handle_t metric_device = nullptr;
    zet_metric_group_handle_t group = nullptr;
    if (!first_metric_group(devices, &metric_device, &group)) GTEST_SKIP() << "no metric group";
    const auto walk_all = [&] {
        zet_metric_group_type_exp_t type{};
        type.stype = static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_GROUP_TYPE_EXP);
        type.type = ~0u;
        zet_metric_group_properties_t props = {};
        props.pNext = &type;
        if (zetMetricGroupGetProperties(group, &props) != ZE_RESULT_SUCCESS || props.metricCount == 0) return 1;
        if (type.type == ~0u) return 2;  // the link was not filled
        // Garbage behind a stype-0 head: readable bytes whose next pointer leads nowhere, a
        // page that cannot be read, an address nothing maps.
        alignas(8) unsigned char junk[64];
        std::memset(junk, 0xA5, sizeof junk);
        const long page = sysconf(_SC_PAGESIZE);
        void* sealed = mmap(nullptr, static_cast<size_t>(page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (sealed == MAP_FAILED) return 3;
        for (void* next : {static_cast<void*>(junk), sealed, kGarbageNext}) {
            zet_metric_group_properties_t p = {};
            p.pNext = next;
            if (zetMetricGroupGetProperties(group, &p) != ZE_RESULT_SUCCESS || p.metricCount == 0) return 4;
        }
        munmap(sealed, static_cast<size_t>(page));
        return 0;
    };
    EXPECT_EXIT(
        {
            alarm(60);
            _exit(walk_all());
        },
        ::testing::ExitedWithCode(0), "");
}

// A chain with a link of a type the function does not know: skipped, the link after it
// filled.
TEST_F(DescriptorsTest, UnknownLinksAreSkipped) {
    ze_event_query_kernel_timestamps_ext_properties_t caps{
        static_cast<ze_structure_type_t>(ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_PROPERTIES), nullptr, 0};
    ze_base_properties_t unknown{static_cast<ze_structure_type_t>(0x7fff1234u), &caps};
    ze_device_properties_t p{};
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    p.pNext = &unknown;
    ZE_OK(zeDeviceGetProperties(device, &p));
    EXPECT_NE(caps.flags & ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_FLAG_KERNEL, 0u);

    ze_device_handle_t metric_device = nullptr;
    zet_metric_group_handle_t group = nullptr;
    if (!first_metric_group(devices, &metric_device, &group)) return;
    zet_metric_group_type_exp_t type{static_cast<zet_structure_type_t>(ZEHAL_STYPE_METRIC_GROUP_TYPE_EXP), nullptr, 0};
    ze_base_properties_t unknown2{static_cast<ze_structure_type_t>(0x7fff1234u), &type};
    zet_metric_group_properties_t gp{};
    gp.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
    gp.pNext = &unknown2;
    ZE_OK(zetMetricGroupGetProperties(group, &gp));
    EXPECT_NE(type.type, 0u);
}

// AML's queue descriptor: a command-list flag, a wrong stype. The queue and the immediate
// list are made and work; unknown modes and priorities are the defaults.
TEST_F(DescriptorsTest, QueueDescriptorsAsRealProgramsPassThem) {
    ze_command_queue_desc_t qd{static_cast<ze_structure_type_t>(0x7fff1234u),
                               nullptr,
                               0,
                               0,
                               ZE_COMMAND_LIST_FLAG_EXPLICIT_ONLY,
                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                               ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l = nullptr;
    ZE_OK(zeCommandListCreateImmediate(context, device, &qd, &l));
    std::memset(host, 0x3C, 256);
    std::memset(host2, 0, 256);
    ZE_OK(zeCommandListAppendMemoryCopy(l, dev, host, 256, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(l, host2, dev, 256, nullptr, 0, nullptr));
    finish(l);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[255], 0x3C);
    ZE_OK(zeCommandListDestroy(l));

    qd.flags = ~0u;
    qd.mode = static_cast<ze_command_queue_mode_t>(9);
    qd.priority = static_cast<ze_command_queue_priority_t>(7);
    ze_command_queue_handle_t q = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &q));
    ZE_OK(zeCommandQueueDestroy(q));
    ZE_OK(zeCommandListCreateImmediate(context, device, &qd, &l));
    ZE_OK(zeCommandListDestroy(l));
    ze_command_list_desc_t ld{static_cast<ze_structure_type_t>(0x7fff1234u), kGarbageNext, 0, ~0u};
    ZE_OK(zeCommandListCreate(context, device, &ld, &l));
    ZE_OK(zeCommandListClose(l));
    ZE_OK(zeCommandListDestroy(l));
}

// Every other descriptor the driver parses, with every flag bit set and a wrong stype: the
// object is made, and the bits the specification defines as selectors are honoured.
TEST_F(DescriptorsTest, EveryFlagBitAndAWrongStypeAreAccepted) {
    const auto wrong = [](auto stype) { return static_cast<decltype(stype)>(0x7fff1234u); };
    ze_context_desc_t cd{wrong(ZE_STRUCTURE_TYPE_CONTEXT_DESC), kGarbageNext, ~0u};
    ze_context_handle_t c = nullptr;
    ZE_OK(zeContextCreate(driver, &cd, &c));
    ZE_OK(zeContextDestroy(c));

    // Event pools: HOST_VISIBLE and kernel timestamps honoured among unknown bits (mapped
    // timestamps where the device has them); event scopes are hints.
    ze_event_query_kernel_timestamps_ext_properties_t caps{
        static_cast<ze_structure_type_t>(ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_PROPERTIES), nullptr, 0};
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    props.pNext = &caps;
    ZE_OK(zeDeviceGetProperties(device, &props));
    uint32_t pool_flags = ~0u;
    if (!(caps.flags & ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_FLAG_SYNCHRONIZED))
        pool_flags &= ~(1u << 3);  // ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP (API 1.6)
    ze_event_pool_desc_t pd{wrong(ZE_STRUCTURE_TYPE_EVENT_POOL_DESC), kGarbageNext, pool_flags, 2};
    ze_event_pool_handle_t pool = nullptr;
    ZE_OK(zeEventPoolCreate(context, &pd, 1, &device, &pool));
    ze_event_desc_t ed{wrong(ZE_STRUCTURE_TYPE_EVENT_DESC), kGarbageNext, 1, ~0u, ~0u};
    ze_event_handle_t e = nullptr;
    ZE_OK(zeEventCreate(pool, &ed, &e));
    ZE_OK(zeEventHostSignal(e));
    EXPECT_EQ(zeEventQueryStatus(e), ZE_RESULT_SUCCESS);
    ze_kernel_timestamp_result_t ts{};
    EXPECT_NE(zeEventQueryKernelTimestamp(e, &ts), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);  // KERNEL_TIMESTAMP honoured
    ZE_OK(zeEventDestroy(e));
    ZE_OK(zeEventPoolDestroy(pool));

    // Fences: SIGNALED honoured, the other bits ignored.
    ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_DEFAULT,
                               ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t q = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &q));
    ze_fence_desc_t fd{wrong(ZE_STRUCTURE_TYPE_FENCE_DESC), kGarbageNext, ~0u};
    ze_fence_handle_t signalled = nullptr, unsignalled = nullptr;
    ZE_OK(zeFenceCreate(q, &fd, &signalled));
    EXPECT_EQ(zeFenceQueryStatus(signalled), ZE_RESULT_SUCCESS);
    fd.flags = ~static_cast<uint32_t>(ZE_FENCE_FLAG_SIGNALED);
    ZE_OK(zeFenceCreate(q, &fd, &unsignalled));
    EXPECT_EQ(zeFenceQueryStatus(unsignalled), ZE_RESULT_NOT_READY);
    ZE_OK(zeFenceDestroy(signalled));
    ZE_OK(zeFenceDestroy(unsignalled));
    ZE_OK(zeCommandQueueDestroy(q));

    // Allocations: every bit is a hint.
    ze_host_mem_alloc_desc_t hd{wrong(ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC), kGarbageNext, ~0u};
    ze_device_mem_alloc_desc_t dd{wrong(ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC), kGarbageNext, ~0u, 0};
    void* p = nullptr;
    ZE_OK(zeMemAllocHost(context, &hd, 4096, 0, &p));
    ZE_OK(zeMemFree(context, p));
    ZE_OK(zeMemAllocDevice(context, &dd, 4096, 0, device, &p));
    ZE_OK(zeMemFree(context, p));
    ZE_OK(zeMemAllocShared(context, &dd, &hd, 4096, 0, device, &p));
    ZE_OK(zeMemFree(context, p));
}

// The tracer's descriptor with a wrong stype and garbage pNext, where the device traces.
TEST_F(DescriptorsTest, TracerDescriptorWithAWrongStype) {
    auto create = extension<decltype(&zetMetricTracerCreateExp)>(driver, "zetMetricTracerCreateExp");
    auto destroy = extension<decltype(&zetMetricTracerDestroyExp)>(driver, "zetMetricTracerDestroyExp");
    ASSERT_TRUE(create && destroy);
    ze_device_handle_t metric_device = nullptr;
    zet_metric_group_handle_t group = nullptr;
    if (!first_metric_group(devices, &metric_device, &group)) GTEST_SKIP() << "no device has metric groups";
    zet_metric_group_properties_t gp{};
    gp.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
    ZE_OK(zetMetricGroupGetProperties(group, &gp));
    if (!(gp.samplingType & ZEHAL_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED))
        GTEST_SKIP() << "the first metric group of this device is not traced";
    ZE_OK(zetContextActivateMetricGroups(context, metric_device, 1, &group));
    zet_metric_tracer_exp_desc_t desc{static_cast<zet_structure_type_t>(0x7fff1234u), kGarbageNext, 0};
    zet_metric_tracer_exp_handle_t tracer = nullptr;
    ZE_OK(create(context, metric_device, 1, &group, &desc, nullptr, &tracer));
    ZE_OK(destroy(tracer));
    ZE_OK(zetContextActivateMetricGroups(context, metric_device, 0, nullptr));
}

// zeInit and zeInitDrivers, asked directly as a loader asks (through the global table of
// libze_zehal.so, which ZEHAL_ZE_DRIVER names): any flags naming GPUs find the driver,
// UINT32_MAX ("every type") among them; flags naming no GPU find none.
TEST(InitFlags, EveryBitIsAccepted) {
    const char* path = std::getenv("ZEHAL_ZE_DRIVER");
    ASSERT_NE(path, nullptr) << "ZEHAL_ZE_DRIVER names libze_zehal.so";
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    ASSERT_NE(lib, nullptr) << dlerror();
    auto getter = reinterpret_cast<ze_result_t (*)(ze_api_version_t, void*)>(dlsym(lib, "zeGetGlobalProcAddrTable"));
    ASSERT_NE(getter, nullptr);
    void* table[8] = {};
    ZE_OK(getter(static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 10)), table));
    auto init = reinterpret_cast<ze_result_t (*)(ze_init_flags_t)>(table[0]);
    EXPECT_EQ(init(~0u), ZE_RESULT_SUCCESS);
    EXPECT_EQ(init(1u << 7), ZE_RESULT_SUCCESS);
    EXPECT_EQ(init(ZE_INIT_FLAG_VPU_ONLY), ZE_RESULT_ERROR_UNINITIALIZED);  // zehal's devices are GPUs
    struct InitDesc {                                                       // ze_init_driver_type_desc_t
        uint32_t stype;
        const void* next;
        uint32_t flags;
    };
    auto init_drivers = reinterpret_cast<ze_result_t (*)(uint32_t*, ze_driver_handle_t*, InitDesc*)>(table[1]);
    InitDesc all{0x7fff1234u, kGarbageNext, ~0u};
    uint32_t count = 0;
    ZE_OK(init_drivers(&count, nullptr, &all));
    EXPECT_EQ(count, 1u);
    ze_driver_handle_t drv = nullptr;
    ZE_OK(init_drivers(&count, &drv, &all));
    EXPECT_NE(drv, nullptr);
    InitDesc no_gpu{0x00020021, nullptr, ~static_cast<uint32_t>(ZE_INIT_DRIVER_TYPE_FLAG_GPU)};
    count = 0;
    ZE_OK(init_drivers(&count, nullptr, &no_gpu));
    EXPECT_EQ(count, 0u);
}

}  // namespace
}  // namespace zetest
