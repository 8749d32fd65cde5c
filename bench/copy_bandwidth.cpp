// Copy bandwidth through a queue, four directions, beside single-thread memcpy.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "benchmarks.hpp"
#include "common/clock.hpp"

namespace zehal::bench {

namespace {

// A device allocation freed when it goes.
struct DeviceMemory {
    hal::Device* device = nullptr;
    void* ptr = nullptr;
    DeviceMemory() = default;
    DeviceMemory(const DeviceMemory&) = delete;
    DeviceMemory& operator=(const DeviceMemory&) = delete;
    ~DeviceMemory() {
        if (ptr) device->free(ptr);
    }
    bool allocate(hal::Device& d, hal::MemoryKind kind, size_t size) {
        device = &d;
        return d.allocate(kind, size, 0, 0, 0, &ptr) == ZE_RESULT_SUCCESS;
    }
};

// "64 MiB", "4 KiB".
std::string size_name(size_t bytes) {
    char text[32];
    if (bytes >= (1u << 20))
        std::snprintf(text, sizeof text, "%zu MiB", bytes >> 20);
    else
        std::snprintf(text, sizeof text, "%zu KiB", bytes >> 10);
    return text;
}

double gbps(size_t bytes, uint64_t ns) { return ns ? static_cast<double>(bytes) / static_cast<double>(ns) : 0; }

// Repetitions for `size`: about `budget` bytes in all, at least 3.
size_t repetitions(size_t size, size_t budget) { return std::max<size_t>(3, std::min<size_t>(1000, budget / size)); }

struct Direction {
    const char* name;
    hal::MemoryKind dst;
    hal::MemoryKind src;
};

}  // namespace

std::vector<Row> copy_bandwidth(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device) return rows;
    const hal::DeviceProperties& props = device->properties();
    const uint32_t ordinal = props.copy_engines > 0 ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    std::shared_ptr<hal::Queue> queue;
    if (device->create_queue(ordinal, 0, &queue) != ZE_RESULT_SUCCESS) return rows;

    const size_t max_bytes = options.quick ? std::min<size_t>(options.max_bytes, 1u << 20) : options.max_bytes;
    const size_t budget = options.quick ? (8u << 20) : (1u << 30);
    const size_t step = options.quick ? 16 : 4;
    const Direction directions[] = {
        {"host->device", hal::MemoryKind::device, hal::MemoryKind::host},
        {"device->host", hal::MemoryKind::host, hal::MemoryKind::device},
        {"device->device", hal::MemoryKind::device, hal::MemoryKind::device},
        {"host->host", hal::MemoryKind::host, hal::MemoryKind::host},
    };

    for (size_t size = 4u << 10; size <= max_bytes && size != 0; size *= step) {
        // The baseline: memcpy between two plain host buffers, pages touched beforehand.
        std::unique_ptr<unsigned char[]> a(new (std::nothrow) unsigned char[size]);
        std::unique_ptr<unsigned char[]> b(new (std::nothrow) unsigned char[size]);
        if (!a || !b) break;
        std::memset(a.get(), 1, size);
        std::memset(b.get(), 2, size);
        const size_t reps = repetitions(size, budget);
        std::memcpy(b.get(), a.get(), size);
        uint64_t t0 = host_now_ns();
        for (size_t i = 0; i < reps; ++i) std::memcpy((i & 1) ? a.get() : b.get(), (i & 1) ? b.get() : a.get(), size);
        const double baseline = gbps(size * reps, host_now_ns() - t0);

        for (const Direction& d : directions) {
            DeviceMemory src;
            DeviceMemory dst;
            if (!src.allocate(*device, d.src, size) || !dst.allocate(*device, d.dst, size)) continue;
            // Touch every page first (a fill on the device; it works on every kind).
            const unsigned char pattern = 0x5A;
            if (queue->append_fill(src.ptr, &pattern, 1, size, nullptr, {}) != ZE_RESULT_SUCCESS ||
                queue->append_fill(dst.ptr, &pattern, 1, size, nullptr, {}) != ZE_RESULT_SUCCESS ||
                queue->append_copy(dst.ptr, src.ptr, size, nullptr, {}) != ZE_RESULT_SUCCESS ||
                queue->host_synchronize(kWaitForever) != ZE_RESULT_SUCCESS)
                continue;
            t0 = host_now_ns();
            bool ok = true;
            for (size_t i = 0; i < reps && ok; ++i)
                ok = queue->append_copy(dst.ptr, src.ptr, size, nullptr, {}) == ZE_RESULT_SUCCESS;
            ok = ok && queue->host_synchronize(kWaitForever) == ZE_RESULT_SUCCESS;
            const double value = gbps(size * reps, host_now_ns() - t0);
            if (!ok) continue;
            Row row;
            row.suite = "copy";
            row.name = std::string(d.name) + " " + size_name(size);
            row.value = value;
            row.unit = "GB/s";
            row.baseline = baseline;
            row.baseline_name = "memcpy";
            row.ratio = baseline > 0 ? value / baseline : 0;
            rows.push_back(std::move(row));
        }
    }
    return rows;
}

}  // namespace zehal::bench
