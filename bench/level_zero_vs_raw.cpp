// The cost of the level_zero backend: the same work through zehal's C++ API on a
// level_zero device and through raw Level Zero calls on the same device (the first device
// of the first driver), in one process, interleaved, best of several rounds each. Rows: a
// 64-byte immediate-list copy round trip (submit, wait for its event) and a 256 MiB
// host->device copy. Needs a Level Zero driver: an Intel GPU, or zehal's own driver:
//   ZE_ENABLE_ALT_DRIVERS=<build>/cpp/ze_driver/libze_zehal.so level_zero_bench [--quick]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "paired_rounds.hpp"
#include "ze_devices.hpp"
#include "ze_raw_copy.hpp"
#include "zehal_copy.hpp"

int main(int argc, char** argv) {
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    const int rounds = quick ? 2 : 8;
    const int small_iters = quick ? 200 : 5000;
    const size_t big = quick ? (16u << 20) : (256u << 20);
    const int big_iters = quick ? 2 : 5;
    // Host areas belong to the default backend: make it level_zero, so both sides copy
    // from host memory of the driver.
    setenv("ZEHAL_BACKEND", "level_zero", 1);

    // zehal's side: the first level_zero device through the C++ API.
    zehal::bench::ZehalCopy ours("level_zero", big);
    const zehal::Device& device = ours.device();
    const uint32_t ordinal = ours.ordinal();

    // The raw side: the same device, a context and an immediate list of its own.
    const ze_driver_handle_t driver = zehal::bench::first_ze_driver();
    uint32_t count = 1;
    ze_device_handle_t zdev = nullptr;
    ZEHAL_BENCH_ZE_CHECK(zeDeviceGet(driver, &count, &zdev));
    uint32_t groups = 0;
    ZEHAL_BENCH_ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(zdev, &groups, nullptr));
    std::vector<ze_command_queue_group_properties_t> gp(
        groups,
        ze_command_queue_group_properties_t{ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, nullptr, 0, 0, 0});
    ZEHAL_BENCH_ZE_CHECK(zeDeviceGetCommandQueueGroupProperties(zdev, &groups, gp.data()));
    // The group zehal's ordinal names: the first with COMPUTE, or the first copy-only one.
    uint32_t ze_ordinal = 0;
    for (uint32_t i = 0; i < groups; ++i) {
        const bool compute = gp[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE;
        const bool copy = gp[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
        if ((ordinal == 0 && compute) || (ordinal == 1 && copy && !compute)) {
            ze_ordinal = i;
            break;
        }
    }
    zehal::bench::ZeRawCopy raw(driver, zdev, ze_ordinal, big);

    using zehal::bench::paired_rounds;
    const auto small = paired_rounds([&] { ours.copy(64); }, [&] { raw.copy(64); }, rounds, small_iters);
    const auto large = paired_rounds([&] { ours.copy(big); }, [&] { raw.copy(big); }, rounds, big_iters);

    std::printf("device: %s (level_zero)\n", device.properties().name);
    std::printf("%-36s %12s %12s %8s\n", "figure", "zehal", "raw L0", "ratio");
    std::printf("%-36s %10.2f us %10.2f us %8.3f\n", "64 B immediate copy round trip", small.a * 1e6, small.b * 1e6,
                small.b / small.a);
    std::printf("%-36s %8.2f GB/s %8.2f GB/s %8.3f\n", (std::to_string(big >> 20) + " MiB host->device copy").c_str(),
                big / large.a / 1e9, big / large.b / 1e9, large.b / large.a);
    std::printf("ratio: raw Level Zero time / zehal time (at least 0.95 is the goal)\n");
    return 0;
}
