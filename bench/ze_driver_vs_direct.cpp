// The cost of the Level Zero driver: the same work through the loader and libze_zehal.so,
// and through zehal's C++ API, in one process, interleaved, best of several rounds each.
// Rows: a 64-byte immediate-list copy round trip (submit, wait for its event) and a
// 256 MiB host->device copy. Run with ZE_ENABLE_ALT_DRIVERS naming the driver:
//   ze_driver_bench [sim|cuda] [--quick]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "zehal/zehal.hpp"

namespace {

using Clock = std::chrono::steady_clock;

#define ZE_CHECK(call)                                                        \
    do {                                                                      \
        ze_result_t r_ = (call);                                              \
        if (r_ != ZE_RESULT_SUCCESS) {                                        \
            std::fprintf(stderr, "%s failed: 0x%x\n", #call, unsigned(r_));    \
            std::exit(1);                                                     \
        }                                                                     \
    } while (0)

// Seconds per call of `f`, best (lowest) of `rounds` means over `iters` calls.
double seconds_per_call(const std::function<void()>& f, int iters) {
    const auto t0 = Clock::now();
    for (int i = 0; i < iters; ++i) f();
    return std::chrono::duration<double>(Clock::now() - t0).count() / iters;
}

struct Pair {
    double driver = 1e30;
    double direct = 1e30;
};

// Interleaves the two sides round by round and keeps each side's best.
Pair measure(const std::function<void()>& driver, const std::function<void()>& direct, int rounds, int iters) {
    Pair best;
    driver();
    direct();
    for (int r = 0; r < rounds; ++r) {
        best.driver = std::min(best.driver, seconds_per_call(driver, iters));
        best.direct = std::min(best.direct, seconds_per_call(direct, iters));
    }
    return best;
}

// The driver's device whose name is `name`.
ze_device_handle_t find_device(ze_driver_handle_t driver, const std::string& name) {
    uint32_t n = 0;
    ZE_CHECK(zeDeviceGet(driver, &n, nullptr));
    std::vector<ze_device_handle_t> all(n);
    ZE_CHECK(zeDeviceGet(driver, &n, all.data()));
    for (ze_device_handle_t d : all) {
        ze_device_properties_t p{};
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
        ZE_CHECK(zeDeviceGetProperties(d, &p));
        if (name == p.name) return d;
    }
    std::fprintf(stderr, "the driver has no device named %s\n", name.c_str());
    std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
    std::string backend = "sim";
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else
            backend = argv[i];
    }
    const int rounds = quick ? 2 : 7;
    const int small_iters = quick ? 200 : 5000;
    const size_t big = quick ? (16u << 20) : (256u << 20);
    const int big_iters = quick ? 2 : 5;

    // The direct path: zehal's C++ API, with host memory of the device's own backend (the
    // pinned path). With the driver on the loader's list, the level_zero backend (zehal's
    // driver seen through the loader) would otherwise be the default and own host areas.
    setenv("ZEHAL_BACKEND", backend.c_str(), 1);
    zehal::Device device = zehal::Device::get(backend, 0);
    zehal::Dma dma(device, device.properties().copy_engines > 0 ? 1 : 0, 0);
    zehal::Area host_area = zehal::Area::host();
    zehal::Area dev_area = zehal::Area::device(device);
    zehal::Buffer h = host_area.map(big);
    zehal::Buffer d = dev_area.map(big);
    std::memset(h.data(), 1, big);

    // The driver's path: the same device through the loader.
    ZE_CHECK(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t count = 1;
    ze_driver_handle_t driver = nullptr;
    ZE_CHECK(zeDriverGet(&count, &driver));
    ze_device_handle_t zdev = find_device(driver, device.properties().name);
    ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
    ze_context_handle_t ctx = nullptr;
    ZE_CHECK(zeContextCreate(driver, &cd, &ctx));
    const uint32_t ordinal = device.properties().copy_engines > 0 ? 1 : 0;
    ze_command_queue_desc_t qd{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, ordinal, 0, 0,
                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t list = nullptr;
    ZE_CHECK(zeCommandListCreateImmediate(ctx, zdev, &qd, &list));
    ze_host_mem_alloc_desc_t hd{ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, nullptr, 0};
    ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    void *zh = nullptr, *zd = nullptr;
    ZE_CHECK(zeMemAllocHost(ctx, &hd, big, 64, &zh));
    ZE_CHECK(zeMemAllocDevice(ctx, &dd, big, 64, zdev, &zd));
    std::memset(zh, 1, big);
    ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool = nullptr;
    ZE_CHECK(zeEventPoolCreate(ctx, &pd, 1, &zdev, &pool));
    ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
    ze_event_handle_t done = nullptr;
    ZE_CHECK(zeEventCreate(pool, &ed, &done));

    auto driver_copy = [&](size_t bytes) {
        ZE_CHECK(zeCommandListAppendMemoryCopy(list, zd, zh, bytes, done, 0, nullptr));
        ZE_CHECK(zeEventHostSynchronize(done, UINT64_MAX));
        ZE_CHECK(zeEventHostReset(done));
    };
    auto direct_copy = [&](size_t bytes) { dma.copy(d.data(), h.data(), bytes).wait(); };

    const Pair small = measure([&] { driver_copy(64); }, [&] { direct_copy(64); }, rounds, small_iters);
    const Pair large = measure([&] { driver_copy(big); }, [&] { direct_copy(big); }, rounds, big_iters);

    std::printf("device: %s (%s)\n", device.properties().name, backend.c_str());
    std::printf("%-36s %12s %12s %8s\n", "figure", "driver", "C++ API", "ratio");
    std::printf("%-36s %10.2f us %10.2f us %8.3f\n", "64 B immediate copy round trip", small.driver * 1e6,
                small.direct * 1e6, small.driver / small.direct);
    std::printf("%-36s %8.2f GB/s %8.2f GB/s %8.3f\n", (std::to_string(big >> 20) + " MiB host->device copy").c_str(),
                big / large.driver / 1e9, big / large.direct / 1e9, large.driver / large.direct);
    std::printf("ratio: driver time / C++ API time (at most 1.05 is the goal)\n");

    ZE_CHECK(zeEventDestroy(done));
    ZE_CHECK(zeEventPoolDestroy(pool));
    ZE_CHECK(zeMemFree(ctx, zh));
    ZE_CHECK(zeMemFree(ctx, zd));
    ZE_CHECK(zeCommandListDestroy(list));
    ZE_CHECK(zeContextDestroy(ctx));
    return 0;
}
