// A C++ tool on zehal's device model: the default device's properties, then one 1 MiB
// host -> device copy on a queue, signalling an event of a timestamp pool, and the copy's
// kernel (and, where supported, synchronized) timestamps. Exit status 0 on success.
#include <cstdio>
#include <memory>
#include <vector>

#include "common/clock.hpp"
#include "common/status.hpp"
#include "hal/registry.hpp"

namespace hal = zehal::hal;

namespace {

bool ok(ze_result_t r, const char* what) {
    if (r == ZE_RESULT_SUCCESS) return true;
    std::fprintf(stderr, "device_timestamps: %s: %.*s\n", what, static_cast<int>(zehal::result_name(r).size()),
                 zehal::result_name(r).data());
    return false;
}

// Elapsed ticks with wrap-around at `bits` valid bits.
uint64_t elapsed(uint64_t start, uint64_t end, uint32_t bits) {
    const uint64_t max = bits >= 64 ? ~0ull : (1ull << bits) - 1;
    return end >= start ? end - start : (max - start) + end + 1;
}

}  // namespace

int main() {
    hal::DeviceRef device;
    if (!ok(hal::default_device(&device), "default_device")) return 1;
    const hal::DeviceProperties& p = device->properties();
    std::printf("device: %s (%.*s), timer %llu Hz, %u copy engines\n", p.name.c_str(),
                static_cast<int>(device->backend_name().size()), device->backend_name().data(),
                static_cast<unsigned long long>(p.timer_hz), p.copy_engines);

    constexpr size_t kBytes = 1u << 20;
    void* src = nullptr;
    void* dst = nullptr;
    if (!ok(device->allocate(hal::MemoryKind::host, kBytes, 64, 0, 0, &src), "allocate host")) return 1;
    if (!ok(device->allocate(hal::MemoryKind::device, kBytes, 64, 0, 0, &dst), "allocate device")) return 1;

    std::shared_ptr<hal::Queue> queue;
    const uint32_t ordinal = p.copy_engines ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    if (!ok(device->create_queue(ordinal, 0, &queue), "create_queue")) return 1;

    const bool synchronized = (p.timestamp_flags & hal::kTimestampSynchronized) != 0;
    const bool kernel = (p.timestamp_flags & hal::kTimestampKernel) != 0;
    uint32_t flags = hal::kPoolHostVisible;
    if (synchronized)
        flags |= hal::kPoolKernelMappedTimestamp;
    else if (kernel)
        flags |= hal::kPoolKernelTimestamp;
    std::shared_ptr<hal::EventPool> pool;
    hal::EventRef event;
    if (!ok(device->create_event_pool(1, flags, &pool), "create_event_pool")) return 1;
    if (!ok(pool->event(0, &event), "event")) return 1;

    const uint64_t before = zehal::host_now_ns();
    if (!ok(queue->append_copy(dst, src, kBytes, event, {}), "append_copy")) return 1;
    if (!ok(event->host_synchronize(zehal::kWaitForever), "host_synchronize")) return 1;
    const uint64_t after = zehal::host_now_ns();
    std::printf("copy: %zu bytes host->device done in %llu ns (host clock)\n", kBytes,
                static_cast<unsigned long long>(after - before));

    if (kernel) {
        uint32_t count = 0;
        if (!ok(event->query_kernel_timestamps(&count, nullptr), "query_kernel_timestamps")) return 1;
        std::vector<hal::KernelTimestampResult> ticks(count);
        if (!ok(event->query_kernel_timestamps(&count, ticks.data()), "query_kernel_timestamps")) return 1;
        for (uint32_t i = 0; i < count; ++i) {
            const uint64_t t = elapsed(ticks[i].global_start, ticks[i].global_end, p.kernel_timestamp_valid_bits);
            std::printf("packet %u: %llu ticks = %.0f ns\n", i, static_cast<unsigned long long>(t),
                        static_cast<double>(t) * 1e9 / static_cast<double>(p.timer_hz));
        }
    }
    if (synchronized) {
        uint32_t count = 0;
        if (!ok(event->query_synchronized_timestamps(&count, nullptr), "query_synchronized_timestamps")) return 1;
        std::vector<hal::KernelTimestampResult> ns(count);
        if (!ok(event->query_synchronized_timestamps(&count, ns.data()), "query_synchronized_timestamps")) return 1;
        for (uint32_t i = 0; i < count; ++i) {
            const bool inside = before <= ns[i].global_start && ns[i].global_start <= ns[i].global_end &&
                                ns[i].global_end <= after;
            std::printf("packet %u: host ns [%llu, %llu] %s\n", i, static_cast<unsigned long long>(ns[i].global_start),
                        static_cast<unsigned long long>(ns[i].global_end),
                        inside ? "within the host reads" : "OUTSIDE the host reads");
            if (!inside) return 1;
        }
    }

    if (!ok(device->free(dst), "free device")) return 1;
    if (!ok(device->free(src), "free host")) return 1;
    std::printf("device_timestamps: ok\n");
    return 0;
}
