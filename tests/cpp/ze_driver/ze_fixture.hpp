// What the driver's tests share: a Level Zero program's set-up through the loader (driver,
// first device, context, immediate list, host and device memory) and small helpers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

#include "spec_ext.h"

#define ZE_OK(call) ASSERT_EQ((call), ZE_RESULT_SUCCESS)

namespace zetest {

inline constexpr uint64_t kForever = UINT64_MAX;

// True for zehal's sim device (its name says so).
inline bool is_sim(ze_device_handle_t d) {
    ze_device_properties_t p{};
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    return zeDeviceGetProperties(d, &p) == ZE_RESULT_SUCCESS && std::strncmp(p.name, "zehal sim", 9) == 0;
}

// The experimental entry point `name` of `driver`, as type F.
template <typename F>
F extension(ze_driver_handle_t driver, const char* name) {
    void* f = nullptr;
    if (zeDriverGetExtensionFunctionAddress(driver, name, &f) != ZE_RESULT_SUCCESS) return nullptr;
    return reinterpret_cast<F>(f);
}

class ZeDriver : public ::testing::Test {
protected:
    void SetUp() override {
        ZE_OK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
        uint32_t count = 1;
        ZE_OK(zeDriverGet(&count, &driver));
        count = 0;
        ZE_OK(zeDeviceGet(driver, &count, nullptr));
        devices.resize(count);
        ZE_OK(zeDeviceGet(driver, &count, devices.data()));
        device = pick_device();
        ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
        ZE_OK(zeContextCreate(driver, &cd, &context));
        list = immediate_list(0);
        ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
        ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
        ZE_OK(zeMemAllocHost(context, &hd, kBytes, 64, &host));
        ZE_OK(zeMemAllocHost(context, &hd, kBytes, 64, &host2));
        ZE_OK(zeMemAllocDevice(context, &dd, kBytes, 64, device, &dev));
    }

    void TearDown() override {
        for (void* p : {host, host2, dev}) {
            if (p) {
                EXPECT_EQ(zeMemFree(context, p), ZE_RESULT_SUCCESS);
            }
        }
        if (list) {
            EXPECT_EQ(zeCommandListDestroy(list), ZE_RESULT_SUCCESS);
        }
        for (auto e : owned_events) EXPECT_EQ(zeEventDestroy(e), ZE_RESULT_SUCCESS);
        for (auto p : owned_pools) EXPECT_EQ(zeEventPoolDestroy(p), ZE_RESULT_SUCCESS);
        if (context) {
            EXPECT_EQ(zeContextDestroy(context), ZE_RESULT_SUCCESS);
        }
    }

    // The device of the test, its list and its device memory: the first listed (a CUDA
    // device where one exists: registry order cuda, sim) unless a fixture picks another.
    virtual ze_device_handle_t pick_device() { return devices.front(); }

    // An immediate list on engine group `ordinal` of the device.
    ze_command_list_handle_t immediate_list(uint32_t ordinal) {
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, ordinal, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_list_handle_t l = nullptr;
        EXPECT_EQ(zeCommandListCreateImmediate(context, device, &qd, &l), ZE_RESULT_SUCCESS);
        return l;
    }

    // `n` events of a new pool with `flags`, made for `pool_devices` (the fixture's device
    // when empty), destroyed at the end of the test.
    std::vector<ze_event_handle_t> make_events(uint32_t n, uint32_t flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                                               std::vector<ze_device_handle_t> pool_devices = {}) {
        if (pool_devices.empty()) pool_devices.push_back(device);
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, n};
        ze_event_pool_handle_t pool = nullptr;
        EXPECT_EQ(
            zeEventPoolCreate(context, &pd, static_cast<uint32_t>(pool_devices.size()), pool_devices.data(), &pool),
            ZE_RESULT_SUCCESS);
        owned_pools.push_back(pool);
        std::vector<ze_event_handle_t> out(n);
        for (uint32_t i = 0; i < n; ++i) {
            ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, i, 0, 0};
            EXPECT_EQ(zeEventCreate(pool, &ed, &out[i]), ZE_RESULT_SUCCESS);
        }
        owned_events.insert(owned_events.begin(), out.begin(), out.end());
        return out;
    }

    // Waits for every command of immediate list `l` (through an event: loader 1.8 has no
    // zeCommandListHostSynchronize).
    void finish(ze_command_list_handle_t l) {
        ze_event_handle_t done = make_events(1)[0];
        ZE_OK(zeCommandListAppendBarrier(l, done, 0, nullptr));
        ZE_OK(zeEventHostSynchronize(done, kForever));
    }

    static constexpr size_t kBytes = 1 << 16;
    ze_driver_handle_t driver = nullptr;
    std::vector<ze_device_handle_t> devices;
    ze_device_handle_t device = nullptr;
    ze_context_handle_t context = nullptr;
    ze_command_list_handle_t list = nullptr;
    void* host = nullptr;
    void* host2 = nullptr;
    void* dev = nullptr;
    std::vector<ze_event_handle_t> owned_events;
    std::vector<ze_event_pool_handle_t> owned_pools;
};

// A driver test on the sim device (skipped where the driver lists none): the device whose
// allocations export and share.
class SimDriver : public ZeDriver {
protected:
    ze_device_handle_t pick_device() override {
        for (ze_device_handle_t d : devices)
            if (is_sim(d)) return d;
        return devices.front();
    }
    void SetUp() override {
        ZeDriver::SetUp();
        if (!is_sim(device)) GTEST_SKIP() << "no sim device";
    }
};

}  // namespace zetest
