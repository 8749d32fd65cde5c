// One event pool for both devices of a context (CTest runs it with ZEHAL_SIM_DEVICES=2), as
// Level Zero programs make it: commands of either sim device's lists signal, reset and query
// its events, timestamp events included, and the host reads their timestamps.
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

// ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP (API 1.6; the system headers may be older).
constexpr uint32_t kMappedTimestamp = 1u << 3;

// CLOCK_MONOTONIC_RAW now, in ns (the host domain of synchronized timestamps).
uint64_t host_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Two sim devices of the driver and one pool made for both.
class PoolOfTwoDevices : public ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        for (ze_device_handle_t d : devices)
            if (is_sim(d)) pair.push_back(d);
        if (pair.size() < 2) GTEST_SKIP() << "two sim devices needed";
        pair.resize(2);
    }
    void TearDown() override {
        for (ze_command_list_handle_t l : owned_lists) EXPECT_EQ(zeCommandListDestroy(l), ZE_RESULT_SUCCESS);
        for (void* p : owned_memory) EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
        ZeDriver::TearDown();
    }
    // `n` events of one pool made for both devices, with `flags`.
    std::vector<ze_event_handle_t> shared_events(uint32_t n, uint32_t flags) { return make_events(n, flags, pair); }
    // Waits for every command of immediate list `l` of either device, through an event of
    // the pair's pool (the fixture's own events belong to its first device, which need not
    // be a sim device).
    void finish_pair_list(ze_command_list_handle_t l) {
        ze_event_handle_t done = shared_events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE)[0];
        ZE_OK(zeCommandListAppendBarrier(l, done, 0, nullptr));
        ZE_OK(zeEventHostSynchronize(done, kForever));
    }
    // An immediate list on the copy engines of device `i`.
    ze_command_list_handle_t list_of(size_t i) {
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 1, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_list_handle_t l = nullptr;
        EXPECT_EQ(zeCommandListCreateImmediate(context, pair[i], &qd, &l), ZE_RESULT_SUCCESS);
        owned_lists.push_back(l);
        return l;
    }
    // `bytes` of memory of `kind` (device memory of device `i`), freed at the end.
    void* memory(ze_memory_type_t kind, size_t i, size_t bytes) {
        void* p = nullptr;
        if (kind == ZE_MEMORY_TYPE_HOST) {
            ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
            EXPECT_EQ(zeMemAllocHost(context, &hd, bytes, 64, &p), ZE_RESULT_SUCCESS);
        } else {
            ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
            EXPECT_EQ(zeMemAllocDevice(context, &dd, bytes, 64, pair[i], &p), ZE_RESULT_SUCCESS);
        }
        owned_memory.push_back(p);
        return p;
    }
    // Device 1's regular list signals the pool's event, device 0's immediate list waits for
    // it; true when everything ran and the data arrived.
    bool release_across_devices() {
        std::vector<ze_event_handle_t> ev = shared_events(2, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
        void* src = memory(ZE_MEMORY_TYPE_HOST, 0, kBytes);
        void* on0 = memory(ZE_MEMORY_TYPE_DEVICE, 0, kBytes);
        void* on1 = memory(ZE_MEMORY_TYPE_DEVICE, 1, kBytes);
        std::memset(src, 0x19, kBytes);
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_queue_handle_t queue = nullptr;
        bool ok = zeCommandQueueCreate(context, pair[1], &qd, &queue) == ZE_RESULT_SUCCESS;
        ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 0, 0};
        ze_command_list_handle_t regular = nullptr;
        ok = ok && zeCommandListCreate(context, pair[1], &ld, &regular) == ZE_RESULT_SUCCESS;
        ok = ok && zeCommandListAppendMemoryCopy(regular, on1, src, kBytes, ev[0], 0, nullptr) == ZE_RESULT_SUCCESS;
        ok = ok && zeCommandListClose(regular) == ZE_RESULT_SUCCESS;
        ze_command_list_handle_t l0 = list_of(0);
        ok = ok && zeCommandListAppendMemoryCopy(l0, on0, on1, kBytes, ev[1], 1, &ev[0]) == ZE_RESULT_SUCCESS;
        ok = ok && zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr) == ZE_RESULT_SUCCESS;
        // Waits whatever happened above: a missing signal is the hang the alarm ends.
        ok = zeEventHostSynchronize(ev[1], kForever) == ZE_RESULT_SUCCESS && ok;
        std::memset(src, 0, kBytes);
        ok = ok && zeEventHostReset(ev[0]) == ZE_RESULT_SUCCESS;
        ok = ok && zeCommandListAppendMemoryCopy(l0, src, on0, kBytes, ev[0], 0, nullptr) == ZE_RESULT_SUCCESS;
        ok = ok && zeEventHostSynchronize(ev[0], kForever) == ZE_RESULT_SUCCESS;
        ok = ok && static_cast<unsigned char*>(src)[kBytes - 1] == 0x19;
        ok = ok && zeCommandQueueSynchronize(queue, kForever) == ZE_RESULT_SUCCESS;
        ok = ok && zeCommandListDestroy(regular) == ZE_RESULT_SUCCESS;
        ok = ok && zeCommandQueueDestroy(queue) == ZE_RESULT_SUCCESS;
        return ok;
    }
    std::vector<ze_device_handle_t> pair;
    std::vector<ze_command_list_handle_t> owned_lists;
    std::vector<void*> owned_memory;
};

// Device 1's copy signals a timestamp event of the pool; device 0's list waits for it and
// signals the next; the host reads both events' kernel and synchronized timestamps.
TEST_F(PoolOfTwoDevices, EitherDevicesListsSignalItsTimestampEvents) {
    std::vector<ze_event_handle_t> ev = shared_events(2, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | kMappedTimestamp);
    void* src = memory(ZE_MEMORY_TYPE_HOST, 0, kBytes);
    void* on1 = memory(ZE_MEMORY_TYPE_DEVICE, 1, kBytes);
    void* on0 = memory(ZE_MEMORY_TYPE_DEVICE, 0, kBytes);
    std::memset(src, 0x7E, kBytes);
    ze_command_list_handle_t l0 = list_of(0);
    ze_command_list_handle_t l1 = list_of(1);
    const uint64_t before = host_ns();
    ZE_OK(zeCommandListAppendMemoryCopy(l1, on1, src, kBytes, ev[0], 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(l0, on0, on1, kBytes, ev[1], 1, &ev[0]));
    ZE_OK(zeEventHostSynchronize(ev[1], kForever));
    const uint64_t after = host_ns();
    ZE_OK(zeEventQueryStatus(ev[0]));
    auto query = extension<decltype(&zeEventQueryKernelTimestampsExt)>(driver, "zeEventQueryKernelTimestampsExt");
    ASSERT_NE(query, nullptr);
    uint64_t ends[2] = {};
    for (int i = 0; i < 2; ++i) {
        SCOPED_TRACE(i);
        ze_kernel_timestamp_result_t core{};
        ZE_OK(zeEventQueryKernelTimestamp(ev[i], &core));
        EXPECT_LE(core.global.kernelStart, core.global.kernelEnd);
        uint32_t count = 0;
        ZE_OK(query(ev[i], pair[0], &count, nullptr));
        ASSERT_EQ(count, 1u);
        ze_kernel_timestamp_result_t ticks{};
        ze_synchronized_timestamp_result_ext_t synced{};
        ze_event_query_kernel_timestamps_results_ext_properties_t res{
            static_cast<ze_structure_type_t>(ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_RESULTS_EXT_PROPERTIES), nullptr,
            &ticks, &synced};
        ZE_OK(query(ev[i], pair[0], &count, &res));
        EXPECT_EQ(std::memcmp(&ticks, &core, sizeof core), 0);
        EXPECT_LE(before, synced.global.kernelStart);
        EXPECT_LE(synced.global.kernelStart, synced.global.kernelEnd);
        EXPECT_LE(synced.global.kernelEnd, after);
        ends[i] = synced.global.kernelEnd;
    }
    // Device 0's copy started after device 1's ended (it waited for its event).
    ze_synchronized_timestamp_result_ext_t second{};
    ze_kernel_timestamp_result_t unused{};
    ze_event_query_kernel_timestamps_results_ext_properties_t res{
        static_cast<ze_structure_type_t>(ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_RESULTS_EXT_PROPERTIES), nullptr,
        &unused, &second};
    uint32_t one = 1;
    ZE_OK(query(ev[1], pair[0], &one, &res));
    EXPECT_LE(ends[0], second.global.kernelStart);
    ZE_OK(zeCommandListAppendMemoryCopy(l0, src, on0, kBytes, nullptr, 0, nullptr));
    finish_pair_list(l0);
    EXPECT_EQ(static_cast<unsigned char*>(src)[kBytes - 1], 0x7E);
}

// Device 1's list writes a global timestamp signalling the pool's event, writes that event's
// kernel timestamps to memory, resets it, and writes them again (zeros: not signalled).
TEST_F(PoolOfTwoDevices, AnotherDevicesListTimestampsResetsAndQueriesItsEvents) {
    std::vector<ze_event_handle_t> ev = shared_events(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                                                             ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    auto* out = static_cast<uint64_t*>(memory(ZE_MEMORY_TYPE_HOST, 1, 64));
    auto* results = static_cast<ze_kernel_timestamp_result_t*>(
        memory(ZE_MEMORY_TYPE_HOST, 1, 2 * sizeof(ze_kernel_timestamp_result_t)));
    std::memset(results, 0xFF, 2 * sizeof(ze_kernel_timestamp_result_t));
    ze_command_list_handle_t l1 = list_of(1);
    ZE_OK(zeCommandListAppendWriteGlobalTimestamp(l1, out, ev[0], 0, nullptr));
    ZE_OK(zeEventHostSynchronize(ev[0], kForever));
    ze_kernel_timestamp_result_t signalled{};
    ZE_OK(zeEventQueryKernelTimestamp(ev[0], &signalled));
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(l1, 1, &ev[0], &results[0], nullptr, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendEventReset(l1, ev[0]));
    ZE_OK(zeCommandListAppendQueryKernelTimestamps(l1, 1, &ev[0], &results[1], nullptr, nullptr, 0, nullptr));
    finish_pair_list(l1);
    EXPECT_EQ(zeEventQueryStatus(ev[0]), ZE_RESULT_NOT_READY);
    EXPECT_EQ(std::memcmp(&results[0], &signalled, sizeof signalled), 0);
    const ze_kernel_timestamp_result_t zeros{};
    EXPECT_EQ(std::memcmp(&results[1], &zeros, sizeof zeros), 0);
    // The host signals and resets it as before.
    ZE_OK(zeEventHostSignal(ev[0]));
    ZE_OK(zeEventQueryStatus(ev[0]));
    ZE_OK(zeEventHostReset(ev[0]));
    EXPECT_EQ(zeEventQueryStatus(ev[0]), ZE_RESULT_NOT_READY);
}

// A regular list of device 1 signals the pool's event that device 0's immediate list waits
// for (level-zero-tests' copies across queues): run in a child, so a signal that never comes
// fails the test instead of hanging it.
TEST_F(PoolOfTwoDevices, ARegularListOfOneDeviceReleasesTheOthersWait) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            alarm(60);
            std::_Exit(release_across_devices() ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zetest
