// Copy bandwidth through a queue, four directions, beside single-thread memcpy on buffers
// allocated as zehal's are, the two measured in interleaved rounds, best of each.
#include <algorithm>
#include <cstdint>
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

// Whether the host can address memory of `kind` on `device` with memcpy: host and shared
// memory always; device memory on the sim, whose memory is all host memory.
bool host_addressable(const hal::Device& device, hal::MemoryKind kind) {
    return kind != hal::MemoryKind::device || device.backend_name() == "sim";
}

// Nanoseconds of `reps` copies of `size` bytes through `queue`, or 0 on failure.
uint64_t time_queue_copies(hal::Queue& queue, void* dst, const void* src, size_t size, size_t reps) {
    const uint64_t t0 = host_now_ns();
    for (size_t i = 0; i < reps; ++i)
        if (queue.append_copy(dst, src, size, nullptr, {}) != ZE_RESULT_SUCCESS) return 0;
    if (queue.host_synchronize(kWaitForever) != ZE_RESULT_SUCCESS) return 0;
    return std::max<uint64_t>(1, host_now_ns() - t0);
}

// Nanoseconds of `reps` memcpy calls of `size` bytes from `src` to `dst`.
uint64_t time_memcpy(void* dst, const void* src, size_t size, size_t reps) {
    const uint64_t t0 = host_now_ns();
    for (size_t i = 0; i < reps; ++i) {
        std::memcpy(dst, src, size);
        // Keeps the compiler from merging the repeated copies into one.
        asm volatile("" : : "r"(dst) : "memory");
    }
    return std::max<uint64_t>(1, host_now_ns() - t0);
}

// The known cause of a ratio above 1 in the table's note; empty at or below 1.
std::string note_for(bool same_buffers, double ratio) {
    if (ratio <= 1.0) return "";
    if (!same_buffers)
        return "the device's copy engine beside a host memcpy: different hardware, not a like-for-like ratio";
    if (ratio <= 1.05)
        return "both sides run the same memcpy on the same buffers (zehal's on the engine thread): run-to-run noise";
    return "no known cause: the same memcpy on the same buffers; measure again";
}

}  // namespace

std::vector<Row> copy_bandwidth(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device) return rows;
    const hal::DeviceProperties& props = device->properties();
    const uint32_t ordinal = props.copy_engines > 0 ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    std::shared_ptr<hal::Queue> queue;
    if (device->create_queue(ordinal, 0, &queue) != ZE_RESULT_SUCCESS) return rows;

    const size_t max_bytes = options.quick ? std::min<size_t>(options.max_bytes, 1u << 20) : options.max_bytes;
    const size_t budget = options.quick ? (8u << 20) : (256u << 20);
    const size_t step = options.quick ? 16 : 4;
    const int rounds = options.quick ? 2 : 5;
    const Direction directions[] = {
        {"host->device", hal::MemoryKind::device, hal::MemoryKind::host},
        {"device->host", hal::MemoryKind::host, hal::MemoryKind::device},
        {"device->device", hal::MemoryKind::device, hal::MemoryKind::device},
        {"host->host", hal::MemoryKind::host, hal::MemoryKind::host},
    };

    for (size_t size = 4u << 10; size <= max_bytes && size != 0; size *= step) {
        const size_t reps = repetitions(size, budget / static_cast<size_t>(rounds));
        for (const Direction& d : directions) {
            DeviceMemory src;
            DeviceMemory dst;
            if (!src.allocate(*device, d.src, size) || !dst.allocate(*device, d.dst, size)) continue;
            // The baseline copies between buffers allocated as zehal's are: the very same
            // ones where the host can address them, else host memory of the device.
            DeviceMemory host_src;
            DeviceMemory host_dst;
            void* base_src = src.ptr;
            void* base_dst = dst.ptr;
            if (!host_addressable(*device, d.src) || !host_addressable(*device, d.dst)) {
                if (!host_src.allocate(*device, hal::MemoryKind::host, size) ||
                    !host_dst.allocate(*device, hal::MemoryKind::host, size))
                    continue;
                base_src = host_src.ptr;
                base_dst = host_dst.ptr;
            }
            // Touch every page first (a fill on the device; it works on every kind), then
            // once more on the host for the baseline's buffers.
            const unsigned char pattern = 0x5A;
            if (queue->append_fill(src.ptr, &pattern, 1, size, nullptr, {}) != ZE_RESULT_SUCCESS ||
                queue->append_fill(dst.ptr, &pattern, 1, size, nullptr, {}) != ZE_RESULT_SUCCESS ||
                queue->append_copy(dst.ptr, src.ptr, size, nullptr, {}) != ZE_RESULT_SUCCESS ||
                queue->host_synchronize(kWaitForever) != ZE_RESULT_SUCCESS)
                continue;
            std::memset(base_src, 0x5A, size);
            std::memcpy(base_dst, base_src, size);
            // Interleaved rounds, the best of each side: a slow moment of the machine
            // falls on both, and neither side is measured only cold or only warm.
            uint64_t ours = UINT64_MAX;
            uint64_t theirs = UINT64_MAX;
            bool ok = true;
            for (int r = 0; r < rounds && ok; ++r) {
                theirs = std::min(theirs, time_memcpy(base_dst, base_src, size, reps));
                const uint64_t ns = time_queue_copies(*queue, dst.ptr, src.ptr, size, reps);
                ok = ns != 0;
                ours = std::min(ours, ns);
            }
            if (!ok) continue;
            Row row;
            row.suite = "copy";
            row.name = std::string(d.name) + " " + size_name(size);
            row.value = gbps(size * reps, ours);
            row.unit = "GB/s";
            row.baseline = gbps(size * reps, theirs);
            row.baseline_name = "memcpy, same buffers";
            if (base_src != src.ptr) row.baseline_name = "memcpy, host buffers of the device";
            row.ratio = row.baseline > 0 ? row.value / row.baseline : 0;
            row.note = note_for(base_src == src.ptr, row.ratio);
            rows.push_back(std::move(row));
        }
    }
    return rows;
}

}  // namespace zehal::bench
