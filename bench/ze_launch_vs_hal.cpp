// The cost of a kernel launch through the Level Zero driver: an empty kernel launched on an
// immediate list and waited for from the host (the loader and libze_zehal.so), beside the
// same through the HAL (Queue::append_launch + host_synchronize, on CUDA cuLaunchKernel +
// cuStreamSynchronize below it), in one process, interleaved rounds, best of each.
// Run with ZE_ENABLE_ALT_DRIVERS naming the driver:
//   ze_launch_bench [sim|cuda] [--quick]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "bench_args.hpp"
#include "paired_rounds.hpp"
#include "ze_devices.hpp"
#include "hal/registry.hpp"

namespace {

constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

// Exits with `what` when a HAL call fails.
void hal_check(ze_result_t r, const char* what) {
    if (r == ZE_RESULT_SUCCESS) return;
    std::fprintf(stderr, "%s failed: 0x%x\n", what, unsigned(r));
    std::exit(1);
}

std::vector<uint8_t> empty_kernel_spirv() {
    std::ifstream file(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/empty.spv", std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (bytes.empty()) {
        std::fprintf(stderr, "%s/empty.spv is missing\n", ZEHAL_SPIRV_KERNEL_DIR);
        std::exit(1);
    }
    return bytes;
}

// An empty kernel's launch and host wait through the loader: an immediate list on compute
// engine 0, its completion seen through an event the launch signals.
class DriverLaunch {
public:
    DriverLaunch(ze_driver_handle_t driver, ze_device_handle_t device, const std::vector<uint8_t>& spirv) {
        ze_context_desc_t cd{ZE_STRUCTURE_TYPE_CONTEXT_DESC, nullptr, 0};
        ZEHAL_BENCH_ZE_CHECK(zeContextCreate(driver, &cd, &context_));
        ze_module_desc_t md{
            ZE_STRUCTURE_TYPE_MODULE_DESC, nullptr, ZE_MODULE_FORMAT_IL_SPIRV, spirv.size(), spirv.data(), "", nullptr};
        ZEHAL_BENCH_ZE_CHECK(zeModuleCreate(context_, device, &md, &module_, nullptr));
        ze_kernel_desc_t kd{ZE_STRUCTURE_TYPE_KERNEL_DESC, nullptr, 0, "empty"};
        ZEHAL_BENCH_ZE_CHECK(zeKernelCreate(module_, &kd, &kernel_));
        ZEHAL_BENCH_ZE_CHECK(zeKernelSetGroupSize(kernel_, 1, 1, 1));
        ze_command_queue_desc_t qd{
            ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, nullptr, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
            ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ZEHAL_BENCH_ZE_CHECK(zeCommandListCreateImmediate(context_, device, &qd, &list_));
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
        ZEHAL_BENCH_ZE_CHECK(zeEventPoolCreate(context_, &pd, 1, &device, &pool_));
        ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, 0, 0, 0};
        ZEHAL_BENCH_ZE_CHECK(zeEventCreate(pool_, &ed, &event_));
    }
    ~DriverLaunch() {
        zeEventDestroy(event_);
        zeEventPoolDestroy(pool_);
        zeCommandListDestroy(list_);
        zeKernelDestroy(kernel_);
        zeModuleDestroy(module_);
        zeContextDestroy(context_);
    }
    DriverLaunch(const DriverLaunch&) = delete;
    DriverLaunch& operator=(const DriverLaunch&) = delete;

    void launch() {
        const ze_group_count_t groups{1, 1, 1};
        ZEHAL_BENCH_ZE_CHECK(zeCommandListAppendLaunchKernel(list_, kernel_, &groups, event_, 0, nullptr));
        ZEHAL_BENCH_ZE_CHECK(zeEventHostSynchronize(event_, kForever));
        ZEHAL_BENCH_ZE_CHECK(zeEventHostReset(event_));
    }

private:
    ze_context_handle_t context_ = nullptr;
    ze_module_handle_t module_ = nullptr;
    ze_kernel_handle_t kernel_ = nullptr;
    ze_command_list_handle_t list_ = nullptr;
    ze_event_pool_handle_t pool_ = nullptr;
    ze_event_handle_t event_ = nullptr;
};

}  // namespace

int main(int argc, char** argv) {
    const auto [backend, quick] = zehal::bench::parse_bench_args(argc, argv);
    const int rounds = quick ? 2 : 8;
    const int iters = quick ? 200 : 5000;
    const std::vector<uint8_t> spirv = empty_kernel_spirv();

    // The HAL's path: the device's queue on compute engine 0.
    std::shared_ptr<zehal::hal::Backend> b;
    hal_check(zehal::hal::find_backend(backend, &b), "find_backend");
    if (b->devices().empty()) hal_check(ZE_RESULT_ERROR_UNINITIALIZED, "a device of the backend");
    const zehal::hal::DeviceRef device = b->devices().front();
    std::shared_ptr<zehal::hal::Module> module;
    std::string log;
    hal_check(device->create_module(zehal::hal::ModuleFormat::spirv, spirv, "", &module, &log), log.c_str());
    std::shared_ptr<zehal::hal::Kernel> kernel;
    hal_check(module->create_kernel("empty", &kernel), "create_kernel");
    std::shared_ptr<zehal::hal::Queue> queue;
    hal_check(device->create_queue(zehal::hal::kComputeOrdinal, 0, &queue), "create_queue");
    const zehal::hal::GroupCount one{1, 1, 1};
    auto hal_launch = [&] {
        hal_check(queue->append_launch(*kernel, one, nullptr, {}), "append_launch");
        hal_check(queue->host_synchronize(kForever), "host_synchronize");
    };

    // The driver's path: the same device through the loader.
    const ze_driver_handle_t driver = zehal::bench::first_ze_driver();
    DriverLaunch through_driver(driver, zehal::bench::find_ze_device(driver, device->properties().name), spirv);

    const auto t = zehal::bench::paired_rounds([&] { through_driver.launch(); }, hal_launch, rounds, iters);
    std::printf("device: %s (%s)\n", device->properties().name.c_str(), backend.c_str());
    std::printf("%-40s %12s %12s %8s\n", "figure", "driver", "HAL", "ratio");
    std::printf("%-40s %10.2f us %10.2f us %8.3f\n", "empty kernel launch + host wait", t.a * 1e6, t.b * 1e6,
                t.a / t.b);
    std::printf("ratio: driver time / HAL time (at most 1.10 is the goal)\n");
    return 0;
}
