// A C++ tool on zehal's public C++ API: the default device's properties, then one 1 MiB
// host -> device copy that signals an event of a timestamp pool, and the copy's kernel
// (and, where supported, synchronized) timestamps. Exit status 0 on success.
#include <zehal/zehal.hpp>

#include <cstdio>
#include <ctime>
#include <exception>

namespace {

uint64_t host_now_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

int run() {
    const zehal::Device device = zehal::Device::default_device();
    const zehal_device_properties_t p = device.properties();
    std::printf("device: %s (%s), timer %llu Hz, %u copy engines\n", p.name, p.backend,
                static_cast<unsigned long long>(p.timer_hz), p.copy_engines);

    constexpr size_t kBytes = 1u << 20;
    zehal::Buffer src = zehal::Area::host().map(kBytes);
    zehal::Buffer dst = zehal::Area::device(device).map(kBytes);
    zehal::Dma dma(device, p.copy_engines ? 1 : 0);

    const bool synchronized = p.timestamp_flags & ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_SYNCHRONIZED;
    const bool kernel = p.timestamp_flags & ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_KERNEL;
    const zehal::EventPool pool(device, 1,
                                synchronized ? zehal::Timestamps::mapped
                                             : (kernel ? zehal::Timestamps::kernel : zehal::Timestamps::none));
    const zehal::Event event = pool.event(0);

    const uint64_t before = host_now_ns();
    dma.copy(dst, src, &event).wait();
    event.synchronize();
    const uint64_t after = host_now_ns();
    std::printf("copy: %zu bytes host->device done in %llu ns (host clock)\n", kBytes,
                static_cast<unsigned long long>(after - before));

    if (kernel) {
        const auto ticks = event.kernel_timestamps();
        for (size_t i = 0; i < ticks.size(); ++i) {
            const uint64_t t = zehal::elapsed_ticks(ticks[i].global.kernel_start, ticks[i].global.kernel_end,
                                                    p.kernel_timestamp_valid_bits);
            std::printf("packet %zu: %llu ticks = %.0f ns\n", i, static_cast<unsigned long long>(t),
                        static_cast<double>(t) * 1e9 / static_cast<double>(p.timer_hz));
        }
    }
    if (synchronized) {
        const auto ns = event.synchronized_timestamps();
        for (size_t i = 0; i < ns.size(); ++i) {
            const auto& g = ns[i].global;
            const bool inside = before <= g.kernel_start && g.kernel_start <= g.kernel_end && g.kernel_end <= after;
            std::printf("packet %zu: host ns [%llu, %llu] %s\n", i, static_cast<unsigned long long>(g.kernel_start),
                        static_cast<unsigned long long>(g.kernel_end),
                        inside ? "within the host reads" : "OUTSIDE the host reads");
            if (!inside) return 1;
        }
    }
    std::printf("device_timestamps: ok\n");
    return 0;
}

}  // namespace

int main() {
    try {
        return run();
    } catch (const zehal::Error& e) {
        std::fprintf(stderr, "device_timestamps: %s\n", e.what());
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "device_timestamps: %s\n", e.what());
        return 1;
    }
}
