// Several devices through the driver (CTest runs it with ZEHAL_SIM_DEVICES=2): two devices of
// one backend, two GPUs where the machine has them, else two sim devices: peer access and P2P
// properties, copies
// between the devices' memory in command lists of either device, in both directions, waits
// for another device's events, and kernel timestamps of a peer copy.
#include <cstring>
#include <vector>

#include "ze_fixture.hpp"

namespace zetest {
namespace {

// True for zehal's sim devices (by name).
class Peers : public ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        std::vector<ze_device_handle_t> gpus, sims;
        for (ze_device_handle_t d : devices) (is_sim(d) ? sims : gpus).push_back(d);
        pair = gpus.size() >= 2 ? gpus : sims;
        if (pair.size() < 2) GTEST_SKIP() << "two devices of one backend needed";
        pair.resize(2);
    }
    // `bytes` of device memory of device `i`, freed at the end of the test.
    void* device_memory(size_t i, size_t bytes) {
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        void* p = nullptr;
        EXPECT_EQ(zeMemAllocDevice(context, &dd, bytes, 64, pair[i], &p), ZE_RESULT_SUCCESS);
        owned_memory.push_back(p);
        return p;
    }
    // An immediate list on engine group `ordinal` of device `i`.
    ze_command_list_handle_t list_of(size_t i, uint32_t ordinal) {
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, ordinal, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_list_handle_t l = nullptr;
        EXPECT_EQ(zeCommandListCreateImmediate(context, pair[i], &qd, &l), ZE_RESULT_SUCCESS);
        owned_lists.push_back(l);
        return l;
    }
    // A host-visible event of a pool of device `i` (with `flags`).
    ze_event_handle_t event_of(size_t i, uint32_t flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE) {
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, 1};
        ze_event_pool_handle_t pool = nullptr;
        EXPECT_EQ(zeEventPoolCreate(context, &pd, 1, &pair[i], &pool), ZE_RESULT_SUCCESS);
        owned_pools.push_back(pool);
        ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
        ze_event_handle_t e = nullptr;
        EXPECT_EQ(zeEventCreate(pool, &ed, &e), ZE_RESULT_SUCCESS);
        owned_events.push_back(e);
        return e;
    }
    // Copies on `l` and waits through an event of device `i` (the list's).
    void copy_and_wait(ze_command_list_handle_t l, size_t i, void* dst, const void* src, size_t bytes) {
        ze_event_handle_t done = event_of(i);
        ZE_OK(zeCommandListAppendMemoryCopy(l, dst, src, bytes, done, 0, nullptr));
        ZE_OK(zeEventHostSynchronize(done, kForever));
    }
    void TearDown() override {
        for (ze_command_list_handle_t l : owned_lists) EXPECT_EQ(zeCommandListDestroy(l), ZE_RESULT_SUCCESS);
        for (void* p : owned_memory) EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
        ZeDriver::TearDown();
    }
    std::vector<void*> owned_memory;
    std::vector<ze_command_list_handle_t> owned_lists;
    // The two devices of the tests: CUDA and sim devices reach no memory of each other.
    std::vector<ze_device_handle_t> pair;
};

TEST_F(Peers, AccessAndP2PPropertiesAgree) {
    for (ze_device_handle_t a : {pair[0], pair[1]}) {
        for (ze_device_handle_t b : {pair[0], pair[1]}) {
            ze_bool_t can = false;
            ZE_OK(zeDeviceCanAccessPeer(a, b, &can));
            ze_device_p2p_bandwidth_exp_properties_t bw{};
            bw.stype = ZE_STRUCTURE_TYPE_DEVICE_P2P_BANDWIDTH_EXP_PROPERTIES;
            ze_device_p2p_properties_t p{ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES, &bw, 0};
            ZE_OK(zeDeviceGetP2PProperties(a, b, &p));
            EXPECT_EQ(can != 0, (p.flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS) != 0);
            if (a == b) {
                EXPECT_TRUE(can);
            }
            EXPECT_EQ(bw.latencyUnit, ZE_LATENCY_UNIT_UNKNOWN);
        }
    }
    EXPECT_EQ(zeDeviceGetP2PProperties(pair[0], pair[1], nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_device_p2p_properties_t p{ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES, nullptr, 0};
    EXPECT_EQ(zeDeviceGetP2PProperties(nullptr, pair[1], &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

// Device 0 to device 1 and back, on the copy and compute engines of each device.
TEST_F(Peers, CopiesBetweenDevicesRunOnEitherDevicesLists) {
    constexpr size_t kCopy = 1 << 20;
    void* on0 = device_memory(0, kCopy);
    void* on1 = device_memory(1, kCopy);
    void* back0 = device_memory(0, kCopy);
    std::vector<unsigned char> data(kCopy), out(kCopy);
    for (size_t k = 0; k < kCopy; ++k) data[k] = static_cast<unsigned char>(k * 13 + 5);
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    void* staging = nullptr;
    ZE_OK(zeMemAllocHost(context, &hd, kCopy, 64, &staging));
    owned_memory.push_back(staging);
    for (size_t runner : {0u, 1u}) {
        for (uint32_t ordinal : {0u, 1u}) {
            SCOPED_TRACE(testing::Message() << "device " << runner << " ordinal " << ordinal);
            ze_command_list_handle_t l = list_of(runner, ordinal);
            std::memcpy(staging, data.data(), kCopy);
            copy_and_wait(l, runner, on0, staging, kCopy);
            copy_and_wait(l, runner, on1, on0, kCopy);    // 0 -> 1
            copy_and_wait(l, runner, back0, on1, kCopy);  // 1 -> 0
            std::memset(staging, 0, kCopy);
            copy_and_wait(l, runner, staging, back0, kCopy);
            EXPECT_EQ(std::memcmp(staging, data.data(), kCopy), 0);
            std::memset(staging, 0, kCopy);
            copy_and_wait(l, runner, staging, on1, kCopy);
            EXPECT_EQ(std::memcmp(staging, data.data(), kCopy), 0);
        }
    }
}

// A regular list of device 1 waits for an event of device 0, which the host signals; its
// peer copy then signals a timestamp event of device 1, whose kernel timestamps answer.
TEST_F(Peers, ListsWaitForAnotherDevicesEventsAndTimestampTheirOwn) {
    void* on0 = device_memory(0, kBytes);
    void* on1 = device_memory(1, kBytes);
    ze_event_handle_t gate = event_of(0);
    ze_event_handle_t stamped = event_of(1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    ze_command_queue_desc_t qd{
        ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 1, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t queue = nullptr;
    ZE_OK(zeCommandQueueCreate(context, pair[1], &qd, &queue));
    ze_command_list_desc_t ld{ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, nullptr, 1, 0};
    ze_command_list_handle_t regular = nullptr;
    ZE_OK(zeCommandListCreate(context, pair[1], &ld, &regular));
    ZE_OK(zeCommandListAppendMemoryCopy(regular, on1, on0, kBytes, stamped, 1, &gate));
    ZE_OK(zeCommandListClose(regular));
    ZE_OK(zeCommandQueueExecuteCommandLists(queue, 1, &regular, nullptr));
    EXPECT_EQ(zeEventQueryStatus(stamped), ZE_RESULT_NOT_READY);
    ZE_OK(zeEventHostSignal(gate));
    ZE_OK(zeEventHostSynchronize(stamped, kForever));
    ze_kernel_timestamp_result_t ts{};
    ZE_OK(zeEventQueryKernelTimestamp(stamped, &ts));
    EXPECT_LE(ts.global.kernelStart, ts.global.kernelEnd);
    // Another device's event without timestamps: both backends signal it (a pool made for
    // every device of a context; peer_events_test.cpp has sim's timestamp events).
    ze_command_list_handle_t l1 = list_of(1, 1);
    ZE_OK(zeEventHostReset(gate));
    ZE_OK(zeCommandListAppendBarrier(l1, gate, 0, nullptr));
    ZE_OK(zeEventHostSynchronize(gate, kForever));
    ZE_OK(zeCommandQueueSynchronize(queue, kForever));
    ZE_OK(zeCommandListDestroy(regular));
    ZE_OK(zeCommandQueueDestroy(queue));
}

}  // namespace
}  // namespace zetest
