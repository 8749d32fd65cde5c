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

#include "bench_args.hpp"
#include "paired_rounds.hpp"
#include "ze_devices.hpp"
#include "ze_raw_copy.hpp"
#include "zehal_copy.hpp"

int main(int argc, char** argv) {
    const auto [backend, quick] = zehal::bench::parse_bench_args(argc, argv);
    const int rounds = quick ? 2 : 8;
    const int small_iters = quick ? 200 : 5000;
    const size_t big = quick ? (16u << 20) : (256u << 20);
    const int big_iters = quick ? 2 : 5;

    // The direct path: zehal's C++ API, with host memory of the device's own backend (the
    // pinned path). With the driver on the loader's list, the level_zero backend (zehal's
    // driver seen through the loader) would otherwise be the default and own host areas.
    setenv("ZEHAL_BACKEND", backend.c_str(), 1);
    zehal::bench::ZehalCopy direct(backend, big);
    const zehal::Device& device = direct.device();

    // The driver's path: the same device through the loader.
    const ze_driver_handle_t driver = zehal::bench::first_ze_driver();
    ze_device_handle_t zdev = zehal::bench::find_ze_device(driver, device.properties().name);
    zehal::bench::ZeRawCopy raw(driver, zdev, direct.ordinal(), big);

    using zehal::bench::paired_rounds;
    const auto small = paired_rounds([&] { raw.copy(64); }, [&] { direct.copy(64); }, rounds, small_iters);
    const auto large = paired_rounds([&] { raw.copy(big); }, [&] { direct.copy(big); }, rounds, big_iters);

    std::printf("device: %s (%s)\n", device.properties().name, backend.c_str());
    std::printf("%-36s %12s %12s %8s\n", "figure", "driver", "C++ API", "ratio");
    std::printf("%-36s %10.2f us %10.2f us %8.3f\n", "64 B immediate copy round trip", small.a * 1e6, small.b * 1e6,
                small.a / small.b);
    std::printf("%-36s %8.2f GB/s %8.2f GB/s %8.3f\n", (std::to_string(big >> 20) + " MiB host->device copy").c_str(),
                big / large.a / 1e9, big / large.b / 1e9, large.a / large.b);
    std::printf("ratio: driver time / C++ API time (at most 1.05 is the goal)\n");
    return 0;
}
