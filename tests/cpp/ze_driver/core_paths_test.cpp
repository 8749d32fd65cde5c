// Core Level Zero paths through the loader: discovery, properties, memory, regular and
// immediate command lists, fences, events across command lists, fills, barriers, global
// and kernel timestamps.
#include <cstring>
#include <ctime>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

uint64_t host_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

using CoreTest = ZeDriver;

TEST_F(CoreTest, DriverVersionPropertiesAndExtensions) {
    ze_api_version_t v{};
    ZE_OK(zeDriverGetApiVersion(driver, &v));
    EXPECT_EQ(ZE_MAJOR_VERSION(v), 1u);
    EXPECT_GE(ZE_MINOR_VERSION(v), 10u);
    ze_driver_properties_t p{ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, nullptr, {}, 0};
    ZE_OK(zeDriverGetProperties(driver, &p));
    EXPECT_NE(p.driverVersion, 0u);
    uint32_t n = 0;
    ZE_OK(zeDriverGetExtensionProperties(driver, &n, nullptr));
    EXPECT_EQ(n, 10u);
    std::vector<ze_driver_extension_properties_t> ext(n);
    n = 1;  // a smaller count gets the first ones
    ZE_OK(zeDriverGetExtensionProperties(driver, &n, ext.data()));
    EXPECT_EQ(n, 1u);
    EXPECT_STREQ(ext[0].name, ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_NAME);
    void* f = nullptr;
    ZE_OK(zeDriverGetExtensionFunctionAddress(driver, "zetMetricTracerCreateExp", &f));
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(zeDriverGetExtensionFunctionAddress(driver, "zeNoSuchFunctionExp", &f), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST_F(CoreTest, DevicePropertiesCarryTheHalsValues) {
    ze_device_properties_t old{};
    old.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    ZE_OK(zeDeviceGetProperties(device, &old));
    ze_event_query_kernel_timestamps_ext_properties_t caps{
        static_cast<ze_structure_type_t>(ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_PROPERTIES), nullptr, 0};
    ze_device_properties_t p{};
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    p.pNext = &caps;
    ZE_OK(zeDeviceGetProperties(device, &p));
    EXPECT_EQ(p.type, ZE_DEVICE_TYPE_GPU);
    EXPECT_GT(p.timerResolution, 0u);                                      // Hz
    EXPECT_EQ(old.timerResolution, 1'000'000'000ull / p.timerResolution);  // ns per tick
    EXPECT_GT(p.kernelTimestampValidBits, 0u);
    EXPECT_GT(p.timestampValidBits, 0u);
    EXPECT_GT(std::strlen(p.name), 0u);
    EXPECT_NE(caps.flags & ZE_EVENT_QUERY_KERNEL_TIMESTAMPS_EXT_FLAG_KERNEL, 0u);

    uint32_t groups = 0;
    ZE_OK(zeDeviceGetCommandQueueGroupProperties(device, &groups, nullptr));
    ASSERT_GE(groups, 1u);
    std::vector<ze_command_queue_group_properties_t> qg(groups);
    for (auto& g : qg) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    ZE_OK(zeDeviceGetCommandQueueGroupProperties(device, &groups, qg.data()));
    EXPECT_NE(qg[0].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE, 0u);
    if (groups > 1) {
        EXPECT_EQ(qg[1].flags, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY);
    }

    uint32_t subs = 5;
    ZE_OK(zeDeviceGetSubDevices(device, &subs, nullptr));
    EXPECT_EQ(subs, 0u);
    uint32_t mems = 0;
    ZE_OK(zeDeviceGetMemoryProperties(device, &mems, nullptr));
    ASSERT_GE(mems, 1u);
    ze_device_memory_properties_t mp{};
    mems = 1;
    ZE_OK(zeDeviceGetMemoryProperties(device, &mems, &mp));
    EXPECT_GT(mp.totalSize, 0u);
    EXPECT_GT(mp.maxBusWidth, 0u);  // the specification asks for a width

    // A GPU answers its PCI address, the sim device (on no bus) UNSUPPORTED_FEATURE.
    EXPECT_EQ(zeDevicePciGetPropertiesExt(device, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_pci_ext_properties_t pci{};
    pci.stype = ZE_STRUCTURE_TYPE_PCI_EXT_PROPERTIES;
    const ze_result_t pci_result = zeDevicePciGetPropertiesExt(device, &pci);
    if (std::strncmp(p.name, "zehal sim", 9) == 0) {
        EXPECT_EQ(pci_result, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    } else {
        EXPECT_EQ(pci_result, ZE_RESULT_SUCCESS);
        EXPECT_EQ(pci.maxSpeed.width, -1);  // unknown, as the specification writes it
    }
    uint64_t h1 = 0, d1 = 0;
    ZE_OK(zeDeviceGetGlobalTimestamps(device, &h1, &d1));
    EXPECT_GT(h1, 0u);
    ZE_OK(zeDeviceGetStatus(device));
}

TEST_F(CoreTest, ImmediateCopyRoundTripAndFill) {
    std::memset(host, 0x5A, kBytes);
    std::memset(host2, 0, kBytes);
    auto done = make_events(1)[0];
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, host, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, dev, kBytes, done, 0, nullptr));
    ZE_OK(zeEventHostSynchronize(done, kForever));
    EXPECT_EQ(std::memcmp(host, host2, kBytes), 0);

    const uint32_t pattern = 0xDEADBEEF;
    ZE_OK(zeCommandListAppendMemoryFill(list, dev, &pattern, sizeof pattern, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, dev, kBytes, nullptr, 0, nullptr));
    finish(list);
    for (size_t i = 0; i < kBytes / 4; ++i) ASSERT_EQ(static_cast<uint32_t*>(host2)[i], pattern);
}

TEST_F(CoreTest, RegularListsRunOnAQueueWithAFence) {
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, device, &qd, &queue));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, device, &ld, &regular));
    const uint8_t byte = 0x11;
    ZE_OK(zeCommandListAppendMemoryFill(regular, dev, &byte, 1, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendBarrier(regular, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(regular, host2, dev, kBytes, nullptr, 0, nullptr));
    EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);  // open
    ZE_OK(zeCommandListClose(regular));
    EXPECT_EQ(zeCommandListAppendBarrier(regular, nullptr, 0, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // closed

    ze_fence_desc_t fd{ZE_STRUCTURE_TYPE_FENCE_DESC, nullptr, 0};
    ze_fence_handle_t fence = nullptr;
    ZE_OK(zeFenceCreate(queue, &fd, &fence));
    EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
    for (int round = 0; round < 3; ++round) {  // a closed list runs as often as it is executed
        std::memset(host2, 0, kBytes);
        ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, fence));
        ZE_OK(zeFenceHostSynchronize(fence, kForever));
        ZE_OK(zeFenceQueryStatus(fence));
        EXPECT_EQ(static_cast<uint8_t*>(host2)[kBytes - 1], 0x11);
        ZE_OK(zeFenceReset(fence));
        EXPECT_EQ(zeFenceQueryStatus(fence), ZE_RESULT_NOT_READY);
    }
    ZE_OK(zeCommandListReset(regular));
    ZE_OK(zeCommandListClose(regular));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
    ZE_OK(zeCommandQueueSynchronize(queue, kForever));
    EXPECT_EQ(zeCommandQueueExecuteCommandLists(queue, 1, &list, nullptr), ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE);
    ZE_OK(zeFenceDestroy(fence));
    ZE_OK(zeCommandListDestroy(regular));
    ZE_OK(zeCommandQueueDestroy(queue));
}

TEST_F(CoreTest, EventsOrderCommandsAcrossLists) {
    ze_command_list_handle_t other = immediate_list(0);
    auto ev = make_events(2);
    // `other` waits for an event that `list` signals later; its copy must not run before.
    // (Into device memory: a host-to-host copy is synchronous on CUDA.)
    std::memset(host, 7, kBytes);
    std::memset(host2, 0, kBytes);
    ZE_OK(zeCommandListAppendWaitOnEvents(other, 1, &ev[0]));
    ZE_OK(zeCommandListAppendMemoryCopy(other, dev, host, kBytes, ev[1], 0, nullptr));
    EXPECT_EQ(zeEventHostSynchronize(ev[1], 1'000'000), ZE_RESULT_NOT_READY);
    // `list` signals it: the copy on `other` follows.
    ZE_OK(zeCommandListAppendSignalEvent(list, ev[0]));
    ZE_OK(zeEventHostSynchronize(ev[1], kForever));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, dev, kBytes, nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(static_cast<uint8_t*>(host2)[kBytes - 1], 7);
    // A reset in a list clears the event after the commands before it.
    ZE_OK(zeCommandListAppendEventReset(list, ev[0]));
    finish(list);
    EXPECT_EQ(zeEventQueryStatus(ev[0]), ZE_RESULT_NOT_READY);
    ZE_OK(zeEventHostSignal(ev[0]));
    ZE_OK(zeEventQueryStatus(ev[0]));
    ZE_OK(zeEventHostReset(ev[0]));
    EXPECT_EQ(zeEventQueryStatus(ev[0]), ZE_RESULT_NOT_READY);
    finish(other);
    ZE_OK(zeCommandListDestroy(other));
}

TEST_F(CoreTest, GlobalTimestampsAreWrittenInOrder) {
    // Host and device memory destinations; the three values never go backwards.
    auto* stamps = static_cast<uint64_t*>(host2);
    ZE_OK(zeCommandListAppendWriteGlobalTimestamp(list, &stamps[0], nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, host, kBytes, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendWriteGlobalTimestamp(list, static_cast<uint64_t*>(dev), nullptr, 0, nullptr));
    auto done = make_events(1)[0];
    ZE_OK(zeCommandListAppendWriteGlobalTimestamp(list, &stamps[2], done, 0, nullptr));
    ZE_OK(zeEventHostSynchronize(done, kForever));
    ZE_OK(zeCommandListAppendMemoryCopy(list, &stamps[1], dev, sizeof(uint64_t), nullptr, 0, nullptr));
    finish(list);
    EXPECT_LE(stamps[0], stamps[1]);
    EXPECT_LE(stamps[1], stamps[2]);
    EXPECT_GT(stamps[2], 0u);
}

TEST_F(CoreTest, KernelTimestampsOfCopiesCoreAndExtension) {
    auto ev = make_events(2, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | (1u << 3));
    const uint64_t before = host_ns();
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, host, kBytes, ev[0], 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, dev, kBytes, ev[1], 0, nullptr));
    ZE_OK(zeEventHostSynchronize(ev[1], kForever));
    const uint64_t after = host_ns();

    ze_kernel_timestamp_result_t core[2]{};
    for (int i = 0; i < 2; ++i) ZE_OK(zeEventQueryKernelTimestamp(ev[i], &core[i]));
    // Queried into memory by a command, packed and at offsets.
    auto* results = static_cast<ze_kernel_timestamp_result_t*>(host);
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(list, 2, ev.data(), results, nullptr, nullptr, 0, nullptr));
    const size_t offsets[2] = {sizeof(ze_kernel_timestamp_result_t) * 4, 0};
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(list, 2, ev.data(), dev, offsets, nullptr, 0, nullptr));
    finish(list);
    ZE_OK(
        zeCommandListAppendMemoryCopy(list, host2, dev, 5 * sizeof(ze_kernel_timestamp_result_t), nullptr, 0, nullptr));
    finish(list);
    auto* from_device = static_cast<ze_kernel_timestamp_result_t*>(host2);
    for (int i = 0; i < 2; ++i) {
        EXPECT_EQ(std::memcmp(&results[i], &core[i], sizeof core[i]), 0);
        EXPECT_EQ(std::memcmp(&from_device[i == 0 ? 4 : 0], &core[i], sizeof core[i]), 0);
    }

    auto query = extension<decltype(&zeEventQueryKernelTimestampsExt)>(driver, "zeEventQueryKernelTimestampsExt");
    ASSERT_NE(query, nullptr);
    uint32_t count = 0;
    ZE_OK(query(ev[1], device, &count, nullptr));
    ASSERT_GE(count, 1u);
    std::vector<ze_kernel_timestamp_result_t> ticks(count);
    std::vector<ze_synchronized_timestamp_result_ext_t> synced(count);
    ze_event_query_kernel_timestamps_results_ext_properties_t res{
        static_cast<ze_structure_type_t>(ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_RESULTS_EXT_PROPERTIES), nullptr,
        ticks.data(), synced.data()};
    ZE_OK(query(ev[1], device, &count, &res));
    EXPECT_EQ(std::memcmp(&ticks[0], &core[1], sizeof core[1]), 0);
    EXPECT_LE(before, synced[0].global.kernelStart);
    EXPECT_LE(synced[0].global.kernelStart, synced[0].global.kernelEnd);
    EXPECT_LE(synced[0].global.kernelEnd, after);
}

TEST_F(CoreTest, MemoryIsDescribed) {
    ze_memory_allocation_properties_t p{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, nullptr, ZE_MEMORY_TYPE_UNKNOWN,
                                        0, 0};
    ze_device_handle_t owner = nullptr;
    ZE_OK(zeMemGetAllocProperties(context, static_cast<char*>(dev) + 100, &p, &owner));
    EXPECT_EQ(p.type, ZE_MEMORY_TYPE_DEVICE);
    EXPECT_EQ(owner, device);
    ZE_OK(zeMemGetAllocProperties(context, host, &p, &owner));
    EXPECT_EQ(p.type, ZE_MEMORY_TYPE_HOST);
    int local = 0;
    ZE_OK(zeMemGetAllocProperties(context, &local, &p, nullptr));
    EXPECT_EQ(p.type, ZE_MEMORY_TYPE_UNKNOWN);
    void* base = nullptr;
    size_t size = 0;
    ZE_OK(zeMemGetAddressRange(context, static_cast<char*>(dev) + 100, &base, &size));
    EXPECT_EQ(base, dev);
    EXPECT_EQ(size, kBytes);

    ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* shared = nullptr;
    ZE_OK(zeMemAllocShared(context, &dd, &hd, 4096, 4096, device, &shared));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(shared) % 4096, 0u);
    ZE_OK(zeMemGetAllocProperties(context, shared, &p, nullptr));
    EXPECT_EQ(p.type, ZE_MEMORY_TYPE_SHARED);
    static_cast<uint8_t*>(shared)[4095] = 1;  // host-accessible
    ZE_OK(zeMemFree(context, shared));
}

}  // namespace
}  // namespace zetest
