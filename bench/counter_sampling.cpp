// What reading a CUDA device's sampled counters (GpuActivity, CUPTI's PM sampling) costs:
// the first start (set-up and start), a restart, and the host CPU the sampling takes while
// it runs, beside the same process idle for as long in the same run.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "hal/counter_source.hpp"
#include "hal/registry.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// User and system CPU seconds of the process so far.
double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
           static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU seconds the process spends over `seconds` of sleeping.
double cpu_over(double seconds) {
    const double before = cpu_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return cpu_seconds() - before;
}

}  // namespace

int main() {
    std::shared_ptr<zehal::hal::Backend> backend;
    if (zehal::hal::find_backend("cuda", &backend) != ZE_RESULT_SUCCESS || backend->devices().empty()) {
        std::printf("no CUDA device\n");
        return 0;
    }
    const zehal::hal::DeviceRef& device = backend->devices()[0];
    zehal::hal::CounterSource* source = device->counter_source();
    if (!source) {
        std::printf("%s: no sampled counters (%s)\n", device->properties().name.c_str(),
                    device->properties().limits.c_str());
        return 0;
    }
    constexpr double kSeconds = 3.0;
    const double idle = cpu_over(kSeconds);
    auto t = Clock::now();
    if (ze_result_t r = source->use(true); r != ZE_RESULT_SUCCESS) {
        std::printf("sampling refused: 0x%x\n", static_cast<unsigned>(r));
        return 1;
    }
    const double first_start_ms = ms_since(t);
    const double sampling = cpu_over(kSeconds);
    std::vector<double> restarts;
    for (int i = 0; i < 10; ++i) {
        source->use(false);
        t = Clock::now();
        source->use(true);
        restarts.push_back(ms_since(t));
    }
    source->use(false);
    std::sort(restarts.begin(), restarts.end());
    std::printf("device: %s\n", device->properties().name.c_str());
    std::printf("first start (set-up and start): %.1f ms\n", first_start_ms);
    std::printf("restart (median of 10): %.2f ms\n", restarts[restarts.size() / 2]);
    std::printf("host CPU over %.0f s: idle %.3f s, sampling %.3f s: %.1f %% of a core for the sampling\n", kSeconds,
                idle, sampling, 100.0 * (sampling - idle) / kSeconds);
    return 0;
}
