// Functions of API versions after 1.4 and their experimental extensions: the last error's
// description, module and image properties, concurrent metric groups, the metric groups'
// global timestamps, and regular lists appended to an immediate list. Loader 1.8 has no
// entry for the core 1.6 function: the test asks the driver's own table for it, as a loader
// does; the experimental ones come from zeDriverGetExtensionFunctionAddress.
#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <thread>

#include "ze_fixture.hpp"

namespace {

using zetest::extension;
using zetest::kForever;

using LastError = ze_result_t (*)(ze_driver_handle_t, const char**);

// zeDriverGetLastErrorDescription from the driver's table for API 1.6 (the seventh member
// of the driver table).
LastError last_error_function() {
    const char* path = std::getenv("ZEHAL_ZE_DRIVER");
    if (!path) return nullptr;
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) return nullptr;
    auto getter = reinterpret_cast<ze_result_t (*)(ze_api_version_t, void*)>(dlsym(lib, "zeGetDriverProcAddrTable"));
    void* table[16] = {};
    if (!getter || getter(static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, 6)), table) != ZE_RESULT_SUCCESS)
        return nullptr;
    return reinterpret_cast<LastError>(table[6]);
}

class LaterApiTest : public zetest::ZeDriver {};

TEST_F(LaterApiTest, LastErrorDescribesTheCallingThreadsLastError) {
    LastError last_error = last_error_function();
    ASSERT_NE(last_error, nullptr);
    const char* text = nullptr;
    EXPECT_EQ(zeMemFree(context, reinterpret_cast<void*>(uintptr_t{0x1000})), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(last_error(driver, &text));
    ASSERT_NE(text, nullptr);
    EXPECT_NE(std::string(text).find("zeMemFree"), std::string::npos) << text;
    EXPECT_NE(std::string(text).find("ZE_RESULT_ERROR_INVALID_ARGUMENT"), std::string::npos) << text;
    // A success leaves it; another thread's error is that thread's.
    uint32_t count = 0;
    ZE_OK(zeDeviceGet(driver, &count, nullptr));
    std::string other;
    std::thread([&] {
        EXPECT_EQ(zeContextGetStatus(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        const char* t = nullptr;
        EXPECT_EQ(last_error(driver, &t), ZE_RESULT_SUCCESS);
        other = t ? t : "";
    }).join();
    EXPECT_NE(other.find("zeContextGetStatus returned ZE_RESULT_ERROR_INVALID_NULL_HANDLE"), std::string::npos)
        << other;
    ZE_OK(last_error(driver, &text));
    EXPECT_NE(std::string(text).find("zeMemFree"), std::string::npos) << text;
    // A function the driver does not implement is described too.
    ze_image_desc_t id{};
    ze_image_handle_t image = nullptr;
    EXPECT_EQ(zeImageCreate(context, device, &id, &image), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    ZE_OK(last_error(driver, &text));
    EXPECT_NE(std::string(text).find("ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"), std::string::npos) << text;
    EXPECT_EQ(last_error(driver, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(last_error(nullptr, &text), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST_F(LaterApiTest, ModulePropertiesSayWhatIsBuiltAndNoImages) {
    ze_device_module_properties_t mp{};
    std::memset(&mp, 0xAB, sizeof mp);
    mp.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    mp.pNext = nullptr;
    ZE_OK(zeDeviceGetModuleProperties(device, &mp));
    // SPIR-V 1.4 where the device builds SPIR-V (zehal built with the compiler), else 0; a
    // device that builds modules takes OpenCL's minimum of argument bytes.
    EXPECT_TRUE(mp.spirvVersionSupported == 0u || mp.spirvVersionSupported == ZE_MAKE_VERSION(1, 4));
    EXPECT_TRUE(mp.maxArgumentsSize == 0u || mp.maxArgumentsSize == 1024u);
    EXPECT_EQ(mp.flags, 0u);
    EXPECT_EQ(mp.fp16flags, 0u);
    EXPECT_EQ(mp.fp64flags, 0u);
    EXPECT_NE(mp.fp32flags & ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST, 0u);  // required of every device
    EXPECT_EQ(mp.printfBufferSize, 0u);
    ze_device_image_properties_t ip{};
    std::memset(&ip, 0xAB, sizeof ip);
    ip.stype = ZE_STRUCTURE_TYPE_DEVICE_IMAGE_PROPERTIES;
    ip.pNext = nullptr;
    ZE_OK(zeDeviceGetImageProperties(device, &ip));
    EXPECT_EQ(ip.maxImageDims1D + ip.maxImageDims2D + ip.maxImageDims3D, 0u);
    EXPECT_EQ(ip.maxImageBufferSize, 0u);
    EXPECT_EQ(ip.maxImageArraySlices + ip.maxSamplers + ip.maxReadImageArgs + ip.maxWriteImageArgs, 0u);
    EXPECT_EQ(zeDeviceGetModuleProperties(nullptr, &mp), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeDeviceGetModuleProperties(device, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeDeviceGetImageProperties(nullptr, &ip), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeDeviceGetImageProperties(device, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

// Every metric group of a device.
std::vector<zet_metric_group_handle_t> metric_groups(ze_device_handle_t device) {
    uint32_t n = 0;
    EXPECT_EQ(zetMetricGroupGet(device, &n, nullptr), ZE_RESULT_SUCCESS);
    std::vector<zet_metric_group_handle_t> groups(n);
    EXPECT_EQ(zetMetricGroupGet(device, &n, groups.data()), ZE_RESULT_SUCCESS);
    return groups;
}

uint32_t domain_of(zet_metric_group_handle_t g) {
    zet_metric_group_properties_t p{};
    p.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
    EXPECT_EQ(zetMetricGroupGetProperties(g, &p), ZE_RESULT_SUCCESS);
    return p.domain;
}

TEST_F(LaterApiTest, ConcurrentMetricGroupsAreSetsOfOneGroupPerDomain) {
    auto concurrent = extension<decltype(&zetDeviceGetConcurrentMetricGroupsExp)>(
        driver, "zetDeviceGetConcurrentMetricGroupsExp");
    ASSERT_NE(concurrent, nullptr);
    auto groups = metric_groups(device);
    ASSERT_FALSE(groups.empty());
    auto rearranged = groups;
    uint32_t sets = 0;
    ZE_OK(concurrent(device, static_cast<uint32_t>(groups.size()), rearranged.data(), nullptr, &sets));
    ASSERT_GE(sets, 1u);
    EXPECT_EQ(rearranged, groups);  // counting rearranges nothing
    std::vector<uint32_t> per_set(sets);
    ZE_OK(concurrent(device, static_cast<uint32_t>(groups.size()), rearranged.data(), per_set.data(), &sets));
    EXPECT_EQ(std::is_permutation(rearranged.begin(), rearranged.end(), groups.begin()), true);
    size_t next = 0;
    for (uint32_t s = 0; s < sets; ++s) {
        ASSERT_GE(per_set[s], 1u);
        std::set<uint32_t> domains;
        for (uint32_t i = 0; i < per_set[s]; ++i) EXPECT_TRUE(domains.insert(domain_of(rearranged[next + i])).second);
        // Each set is one activation.
        EXPECT_EQ(zetContextActivateMetricGroups(context, device, per_set[s], &rearranged[next]), ZE_RESULT_SUCCESS);
        next += per_set[s];
    }
    EXPECT_EQ(next, groups.size());
    ZE_OK(zetContextActivateMetricGroups(context, device, 0, nullptr));
    // A group twice goes to two sets.
    std::vector<zet_metric_group_handle_t> twice{groups[0], groups[0]};
    ZE_OK(concurrent(device, 2, twice.data(), nullptr, &sets));
    EXPECT_EQ(sets, 2u);
    uint32_t too_few = 1;
    EXPECT_EQ(concurrent(device, 2, twice.data(), per_set.data(), &too_few), ZE_RESULT_ERROR_INVALID_SIZE);

    EXPECT_EQ(concurrent(nullptr, 1, groups.data(), nullptr, &sets), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(concurrent(device, 1, groups.data(), nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(concurrent(device, 1, nullptr, nullptr, &sets), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    zet_metric_group_handle_t bogus[] = {reinterpret_cast<zet_metric_group_handle_t>(uintptr_t{0x10})};
    EXPECT_EQ(concurrent(device, 1, bogus, nullptr, &sets), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    zet_metric_group_handle_t none[] = {nullptr};
    EXPECT_EQ(concurrent(device, 1, none, nullptr, &sets), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    if (devices.size() > 1) {
        auto theirs = metric_groups(devices[1]);
        if (!theirs.empty()) {
            EXPECT_EQ(concurrent(device, 1, theirs.data(), nullptr, &sets), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
    }
}

// The global timestamp is the device's; the metric timestamp is the clock of the group's
// data: device ticks for reports, and for a tracer-based group the host time its decoded
// entries carry, counted in whole-ns timer periods beside device ticks, so that
// (metric - global) * period is the offset from device time to entry time.
TEST_F(LaterApiTest, MetricGlobalTimestampsAreTheDevicesAndTheMetricsClocks) {
    auto timestamps = extension<decltype(&zetMetricGroupGetGlobalTimestampsExp)>(
        driver, "zetMetricGroupGetGlobalTimestampsExp");
    ASSERT_NE(timestamps, nullptr);
    auto groups = metric_groups(device);
    ASSERT_FALSE(groups.empty());
    ze_device_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    ZE_OK(zeDeviceGetProperties(device, &props));
    ASSERT_GT(props.timerResolution, 0u);
    const uint64_t period_ns = std::max<uint64_t>(1, 1'000'000'000u / props.timerResolution);
    const auto to_ticks = [&](uint64_t ns) { return ns / period_ns; };
    bool saw_tracer = false;
    for (zet_metric_group_handle_t group : groups) {
        zet_metric_group_properties_t gp{};
        gp.stype = ZET_STRUCTURE_TYPE_METRIC_GROUP_PROPERTIES;
        ZE_OK(zetMetricGroupGetProperties(group, &gp));
        const bool tracer = gp.samplingType & ZEHAL_METRIC_GROUP_SAMPLING_TYPE_FLAG_EXP_TRACER_BASED;
        saw_tracer |= tracer;
        uint64_t host_before = 0, ticks_before = 0, host_after = 0, ticks_after = 0, global = 0, metric = 0;
        ZE_OK(zeDeviceGetGlobalTimestamps(device, &host_before, &ticks_before));
        ZE_OK(timestamps(group, true, &global, &metric));
        ZE_OK(timestamps(group, false, &global, &metric));
        ZE_OK(zeDeviceGetGlobalTimestamps(device, &host_after, &ticks_after));
        EXPECT_GE(global, ticks_before);  // device ticks
        EXPECT_LE(global, ticks_after);
        EXPECT_GE(metric, tracer ? to_ticks(host_before) : ticks_before) << gp.name;
        EXPECT_LE(metric, tracer ? to_ticks(host_after) : ticks_after) << gp.name;
        ZE_OK(timestamps(group, true, &global, &metric));
        EXPECT_GE(global, host_after);  // host ns
        if (tracer) {
            EXPECT_EQ(metric, global) << gp.name;  // entries are in host ns already
        } else {
            EXPECT_GE(metric, ticks_after) << gp.name;
        }
    }
    EXPECT_TRUE(saw_tracer);
    uint64_t global = 0, metric = 0;
    EXPECT_EQ(timestamps(nullptr, true, &global, &metric), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(timestamps(groups[0], true, nullptr, &metric), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(timestamps(groups[0], true, &global, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(LaterApiTest, RegularListsRunThroughAnImmediateListAfterItsWaitList) {
    auto append = extension<decltype(&zeCommandListImmediateAppendCommandListsExp)>(
        driver, "zeCommandListImmediateAppendCommandListsExp");
    ASSERT_NE(append, nullptr);
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    std::memset(host, 9, kBytes);
    std::memset(host2, 0, kBytes);
    ZE_OK(zeCommandListAppendMemoryCopy(regular, dev, host, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendBarrier(regular, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(regular, host2, dev, kBytes, nullptr, 0, nullptr));
    EXPECT_EQ(append(list, 1, &regular, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // still open
    ZE_OK(zeCommandListClose(regular));
    auto ev = make_events(2);
    ZE_OK(append(list, 1, &regular, ev[1], 1, &ev[0]));
    EXPECT_EQ(zeEventQueryStatus(ev[1]), ZE_RESULT_NOT_READY);  // waits for ev[0]
    ZE_OK(zeEventHostSignal(ev[0]));
    ZE_OK(zeEventHostSynchronize(ev[1], kForever));
    EXPECT_EQ(static_cast<uint8_t*>(host2)[kBytes - 1], 9);
    // Appended again, the list runs again.
    std::memset(host, 4, kBytes);
    ZE_OK(zeEventHostReset(ev[1]));
    ZE_OK(append(list, 1, &regular, ev[1], 0, nullptr));
    ZE_OK(zeEventHostSynchronize(ev[1], kForever));
    EXPECT_EQ(static_cast<uint8_t*>(host2)[0], 4);

    EXPECT_EQ(append(regular, 1, &regular, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // not immediate
    ze_command_list_handle_t other = immediate_list(0);
    EXPECT_EQ(append(list, 1, &other, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
    EXPECT_EQ(append(list, 1, nullptr, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(append(nullptr, 1, &regular, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ze_command_list_handle_t none = nullptr;
    EXPECT_EQ(append(list, 1, &none, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeCommandListDestroy(other));
    ZE_OK(zeCommandListDestroy(regular));
}

}  // namespace

namespace {

// The first group with every flag of `with` and none of `without`, as programs pick one.
int group_with(const std::vector<ze_command_queue_group_properties_t>& groups, uint32_t with, uint32_t without) {
    for (size_t i = 0; i < groups.size(); ++i)
        if ((groups[i].flags & with) == with && (groups[i].flags & without) == 0) return static_cast<int>(i);
    return -1;
}

TEST_F(LaterApiTest, ProgramsFindTheComputeGroupAndTheCopyOnlyGroup) {
    uint32_t n = 0;
    ZE_OK(zeDeviceGetCommandQueueGroupProperties(device, &n, nullptr));
    std::vector<ze_command_queue_group_properties_t> groups(n);
    for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    ZE_OK(zeDeviceGetCommandQueueGroupProperties(device, &n, groups.data()));
    EXPECT_EQ(group_with(groups,
                         ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE |
                             ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS,
                         0),
              0);
    if (n > 1) {
        EXPECT_EQ(
            group_with(groups, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE),
            1);
    }
}

}  // namespace

namespace {

TEST_F(LaterApiTest, PrefetchAndAdviceAreCheckedHintsInTheListsOrder) {
    auto ev = make_events(1);
    ZE_OK(zeCommandListAppendMemoryPrefetch(list, host, kBytes));
    ZE_OK(zeCommandListAppendMemAdvise(list, device, host, kBytes, ZE_MEMORY_ADVICE_SET_READ_MOSTLY));
    ZE_OK(zeCommandListAppendMemAdvise(list, device, host, kBytes, ZE_MEMORY_ADVICE_BIAS_UNCACHED));
    ZE_OK(zeCommandListAppendSignalEvent(list, ev[0]));
    ZE_OK(zeEventHostSynchronize(ev[0], kForever));
    EXPECT_EQ(zeCommandListAppendMemoryPrefetch(list, nullptr, kBytes), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemoryPrefetch(nullptr, host, kBytes), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendMemAdvise(list, nullptr, host, kBytes, ZE_MEMORY_ADVICE_SET_READ_MOSTLY),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeCommandListAppendMemAdvise(list, device, nullptr, kBytes, ZE_MEMORY_ADVICE_SET_READ_MOSTLY),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeCommandListAppendMemAdvise(list, device, host, kBytes, static_cast<ze_memory_advice_t>(10)),
              ZE_RESULT_ERROR_INVALID_ENUMERATION);
    // A closed regular list refuses them as any append.
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    ZE_OK(zeCommandListClose(regular));
    EXPECT_EQ(zeCommandListAppendMemoryPrefetch(regular, host, kBytes), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeCommandListAppendMemAdvise(regular, device, host, kBytes, ZE_MEMORY_ADVICE_SET_READ_MOSTLY),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeCommandListDestroy(regular));
}

}  // namespace
