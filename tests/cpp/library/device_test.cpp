// Backends and devices: zehal::backends, default_backend, Device (get, all, properties,
// global timestamps), zehal::Error, and the C functions under them.
#include <gtest/gtest.h>

#include <zehal/zehal.hpp>

#include <cstdlib>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "expect_code.hpp"

namespace {

const zehal::Backend* find(const std::vector<zehal::Backend>& all, const std::string& name) {
    for (const zehal::Backend& b : all)
        if (b.name == name) return &b;
    return nullptr;
}

TEST(CppApiDevice, BackendsListEveryKnownOneInRegistryOrder) {
    const std::vector<zehal::Backend> all = zehal::backends();
    ASSERT_EQ(all.size(), 3u);
    EXPECT_EQ(all[0].name, "level_zero");
    EXPECT_EQ(all[1].name, "cuda");
    EXPECT_EQ(all[2].name, "sim");
    EXPECT_TRUE(all[2].available);
    EXPECT_EQ(all[2].device_count, zehal::Device::all("sim").size());
    for (const zehal::Backend& b : all) {
        EXPECT_EQ(b.available, b.reason.empty()) << b.name << ": " << b.reason;
        if (!b.available) {
            EXPECT_EQ(b.device_count, 0u);
            EXPECT_ZE_ERROR(zehal::Device::get(b.name), ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE);
        }
    }
    EXPECT_EQ(zehal::default_backend(), "sim");  // ZEHAL_BACKEND=sim
}

TEST(CppApiDevice, BackendGetCountsThenFills) {
    uint32_t n = 0;
    ASSERT_EQ(zehal_backend_get(&n, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(n, 3u);
    zehal_backend_properties_t one[2]{};
    std::memset(one, 0x7F, sizeof one);
    uint32_t k = 1;
    ASSERT_EQ(zehal_backend_get(&k, one), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k, 1u);
    EXPECT_STREQ(one[0].name, "level_zero");
    EXPECT_EQ(one[1].name[0], 0x7F);  // past *count: untouched
    std::vector<zehal_backend_properties_t> many(10);
    k = 10;
    ASSERT_EQ(zehal_backend_get(&k, many.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(k, 3u);
    EXPECT_STREQ(many[2].name, "sim");
    EXPECT_EQ(many[2].available, 1);
    EXPECT_STREQ(many[2].reason, "");
}

TEST(CppApiDevice, BackendGetRejectsNullPointers) {
    EXPECT_EQ(zehal_backend_get(nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    uint32_t k = 2;
    EXPECT_EQ(zehal_backend_get(&k, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(k, 2u);
    EXPECT_EQ(zehal_backend_get_default(nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(CppApiDevice, DefaultBackendFollowsZehalBackend) {
    char name[ZEHAL_MAX_BACKEND_NAME];
    ASSERT_EQ(setenv("ZEHAL_BACKEND", "no such backend", 1), 0);
    EXPECT_EQ(zehal_backend_get_default(name), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::default_backend(), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(setenv("ZEHAL_BACKEND", "sim", 1), 0);
    ASSERT_EQ(zehal_backend_get_default(name), ZE_RESULT_SUCCESS);
    EXPECT_STREQ(name, "sim");
}

TEST(CppApiDevice, DevicesAndTheirProperties) {
    const std::vector<zehal::Device> devices = zehal::Device::all("sim");
    ASSERT_FALSE(devices.empty());
    EXPECT_EQ(zehal::Device::all(), devices);  // the default backend is sim here
    EXPECT_EQ(zehal::Device::default_device(), devices.front());
    std::set<std::string> names, uuids;
    for (size_t i = 0; i < devices.size(); ++i) {
        EXPECT_EQ(zehal::Device::get("sim", static_cast<uint32_t>(i)), devices[i]);
        const zehal_device_properties_t p = devices[i].properties();
        EXPECT_STREQ(p.backend, "sim");
        EXPECT_GT(std::strlen(p.name), 0u);
        EXPECT_GT(p.timer_hz, 0u);
        EXPECT_GT(p.memory_bytes, 0u);
        EXPECT_LE(p.max_allocation_bytes, p.memory_bytes);
        EXPECT_GT(p.kernel_timestamp_valid_bits, 0u);
        names.insert(p.name);
        uuids.insert(std::string(reinterpret_cast<const char*>(p.uuid), sizeof p.uuid));
    }
    EXPECT_EQ(names.size(), devices.size());
    EXPECT_EQ(uuids.size(), devices.size());
    uint32_t n = 0;
    ASSERT_EQ(zehal_device_count(nullptr, &n), ZE_RESULT_SUCCESS);
    EXPECT_EQ(n, devices.size());
}

TEST(CppApiDevice, GlobalTimestampsMoveForward) {
    const zehal::Device d = zehal::Device::default_device();
    const auto [host0, ticks0] = d.global_timestamps();
    const auto [host1, ticks1] = d.global_timestamps();
    EXPECT_GT(host0, 0u);
    EXPECT_LE(host0, host1);
    EXPECT_LE(ticks0, ticks1);
}

// Every device of the sim backend (ZEHAL_SIM_DEVICES, 1 by default) accesses every other's
// memory and its own; bad handles are named.
TEST(CppApiDevice, PeerAccessAndProperties) {
    const std::vector<zehal::Device> sims = zehal::Device::all("sim");
    for (const zehal::Device& a : sims) {
        for (const zehal::Device& b : sims) {
            EXPECT_TRUE(a.can_access_peer(b));
            const zehal_peer_properties_t p = a.peer_properties(b);
            EXPECT_EQ(p.access, 1);
            EXPECT_EQ(p.atomics, 1);
        }
    }
    const zehal_device_t d = sims.front().handle();
    uint8_t value = 7;
    zehal_peer_properties_t p{};
    EXPECT_EQ(zehal_device_can_access_peer(nullptr, d, &value), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_can_access_peer(d, nullptr, &value), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_can_access_peer(d, d, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(value, 7);
    EXPECT_EQ(zehal_device_get_peer_properties(d, nullptr, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_get_peer_properties(d, d, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(CppApiDevice, BadDevicesThrowWithTheCode) {
    EXPECT_ZE_ERROR(zehal::Device::get("no such backend"), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::Device::all("no such backend"), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const uint32_t n = static_cast<uint32_t>(zehal::Device::all("sim").size());
    EXPECT_ZE_ERROR(zehal::Device::get("sim", n), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::Device::get("sim", UINT32_MAX), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    uint32_t count = 0;
    EXPECT_EQ(zehal_device_count("sim", nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zehal_device_count("nope", &count), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    zehal_device_properties_t p{};
    EXPECT_EQ(zehal_device_get_properties(nullptr, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zehal_device_get_properties(zehal::Device::get("sim").handle(), nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST(CppApiDevice, ErrorCarriesTheCodeAndWhat) {
    const zehal::Error e(ZE_RESULT_ERROR_INVALID_SIZE, "doing this");
    EXPECT_EQ(e.code(), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_NE(std::string(e.what()).find("doing this"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("0x78000008"), std::string::npos);
    const std::runtime_error& base = e;
    EXPECT_STREQ(base.what(), e.what());
}

TEST(CppApiDevice, ThreadsAskAtOnce) {
    std::vector<std::thread> threads;
    std::vector<int> ok(8, 0);
    for (size_t t = 0; t < ok.size(); ++t)
        threads.emplace_back([&ok, t] {
            for (int i = 0; i < 50; ++i) {
                const auto all = zehal::backends();
                const zehal::Device d = zehal::Device::get("sim", 0);
                if (find(all, "sim") && d.properties().timer_hz > 0) ++ok[t];
            }
        });
    for (auto& t : threads) t.join();
    for (int n : ok) EXPECT_EQ(n, 50);
}

}  // namespace
