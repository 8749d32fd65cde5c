// The cost of the Level Zero driver: the same work through the loader and libze_zehal.so,
// and through zehal's C++ API, in one process, interleaved rounds whose order alternates, best of each.
// Rows: a 64-byte immediate-list copy round trip (submit, wait for its event) and a
// 256 MiB host->device copy. Run with ZE_ENABLE_ALT_DRIVERS naming the driver:
//   ze_driver_bench [sim|cuda] [--quick]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "paired_rounds.hpp"
#include "ze_devices.hpp"
#include "ze_raw_copy.hpp"
#include "zehal/zehal.hpp"

int main(int argc, char** argv) {
    std::string backend = "sim";
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else
            backend = argv[i];
    }
    const int rounds = quick ? 2 : 8;
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
    const ze_driver_handle_t driver = zehal::bench::first_ze_driver();
    ze_device_handle_t zdev = zehal::bench::find_ze_device(driver, device.properties().name);
    zehal::bench::ZeRawCopy raw(driver, zdev, device.properties().copy_engines > 0 ? 1 : 0, big);
    auto direct_copy = [&](size_t bytes) { dma.copy(d.data(), h.data(), bytes).wait(); };

    using zehal::bench::paired_rounds;
    const auto small = paired_rounds([&] { raw.copy(64); }, [&] { direct_copy(64); }, rounds, small_iters);
    const auto large = paired_rounds([&] { raw.copy(big); }, [&] { direct_copy(big); }, rounds, big_iters);

    std::printf("device: %s (%s)\n", device.properties().name, backend.c_str());
    std::printf("%-36s %12s %12s %8s\n", "figure", "driver", "C++ API", "ratio");
    std::printf("%-36s %10.2f us %10.2f us %8.3f\n", "64 B immediate copy round trip", small.a * 1e6, small.b * 1e6,
                small.a / small.b);
    std::printf("%-36s %8.2f GB/s %8.2f GB/s %8.3f\n", (std::to_string(big >> 20) + " MiB host->device copy").c_str(),
                big / large.a / 1e9, big / large.b / 1e9, large.a / large.b);
    std::printf("ratio: driver time / C++ API time (at most 1.05 is the goal)\n");
    return 0;
}
