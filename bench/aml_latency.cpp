// AML latencies: a 64-byte request round trip (submit + wait) and area mmap+munmap, each
// beside a baseline measured in the same run.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "aml/area.hpp"
#include "aml/dma.hpp"
#include "benchmarks.hpp"
#include "common/clock.hpp"

namespace zehal::bench {

namespace {

constexpr size_t kRequestBytes = 64;
constexpr size_t kMapBytes = 4096;
constexpr int kRepeats = 3;  // the best mean of three runs, to shed scheduling noise

// Best mean time per call of `op` in µs over kRepeats runs of `n` calls; 0 when op fails.
template <typename Op>
double best_us(size_t n, Op op) {
    double best = 0;
    for (int rep = 0; rep < kRepeats; ++rep) {
        const uint64_t t0 = host_now_ns();
        for (size_t i = 0; i < n; ++i) {
            if (!op()) return 0;
        }
        const double us = static_cast<double>(host_now_ns() - t0) / 1e3 / static_cast<double>(n);
        if (rep == 0 || us < best) best = us;
    }
    return best;
}

Row row(const char* suite, std::string name, double value, double baseline, const char* baseline_name) {
    Row r;
    r.suite = suite;
    r.name = std::move(name);
    r.value = value;
    r.unit = "us";
    r.baseline = baseline;
    r.baseline_name = baseline_name;
    r.ratio = value > 0 ? baseline / value : 0;  // a time: baseline / value, higher is better
    return r;
}

// A 64-byte host -> device request round trip through an AML engine, beside the same copy
// through a bare HAL queue and beside memcpy.
void request_rows(const hal::DeviceRef& device, size_t n, std::vector<Row>* rows) {
    const uint32_t ordinal = device->properties().copy_engines > 0 ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    std::shared_ptr<aml::Area> host;
    std::shared_ptr<aml::Area> dev;
    std::shared_ptr<aml::Dma> dma;
    if (aml::Area::create(device, hal::MemoryKind::host, 0, 0, 64, &host) != ZE_RESULT_SUCCESS ||
        aml::Area::create(device, hal::MemoryKind::device, 0, 0, 64, &dev) != ZE_RESULT_SUCCESS ||
        aml::Dma::create(device, ordinal, 0, &dma) != ZE_RESULT_SUCCESS)
        return;
    void* src = nullptr;
    void* dst = nullptr;
    if (host->map(kRequestBytes, &src) != ZE_RESULT_SUCCESS || dev->map(kRequestBytes, &dst) != ZE_RESULT_SUCCESS)
        return;
    std::memset(src, 0x5A, kRequestBytes);

    const auto aml_round_trip = [&] {
        std::shared_ptr<aml::Request> request;
        return dma->copy(dst, src, kRequestBytes, &request) == ZE_RESULT_SUCCESS &&
               request->wait() == ZE_RESULT_SUCCESS;
    };

    std::shared_ptr<hal::Queue> queue;
    std::shared_ptr<hal::EventPool> pool;
    hal::EventRef event;
    if (device->create_queue(ordinal, 0, &queue) != ZE_RESULT_SUCCESS ||
        device->create_event_pool(1, hal::kPoolHostVisible, &pool) != ZE_RESULT_SUCCESS ||
        pool->event(0, &event) != ZE_RESULT_SUCCESS)
        return;
    const auto hal_round_trip = [&] {
        return queue->append_copy(dst, src, kRequestBytes, event, {}) == ZE_RESULT_SUCCESS &&
               event->host_synchronize(kWaitForever) == ZE_RESULT_SUCCESS && event->host_reset() == ZE_RESULT_SUCCESS;
    };

    alignas(64) unsigned char a[kRequestBytes];
    alignas(64) unsigned char b[kRequestBytes];
    std::memset(a, 1, sizeof a);
    const auto memcpy_64 = [&] {
        std::memcpy(b, a, sizeof a);
        // Keeps the copy from being optimized away.
        asm volatile("" : : "r"(b) : "memory");
        return true;
    };

    best_us(n / 10 + 1, aml_round_trip);  // warm-up: event pools, engine threads, caches
    const double aml_us = best_us(n, aml_round_trip);
    const double hal_us = best_us(n, hal_round_trip);
    const double memcpy_us = best_us(n * 100, memcpy_64);
    rows->push_back(row("request", "64 B round trip (submit + wait)", aml_us, hal_us, "HAL queue copy + event wait"));
    rows->push_back(row("request", "64 B round trip (submit + wait)", aml_us, memcpy_us, "memcpy 64 B"));
    host->unmap(src);
    dev->unmap(dst);
}

// mmap+munmap of 4 KiB from a host and a device area, beside malloc+free and the HAL's
// allocate+free.
void area_rows(const hal::DeviceRef& device, size_t n, std::vector<Row>* rows) {
    std::shared_ptr<aml::Area> host;
    std::shared_ptr<aml::Area> dev;
    if (aml::Area::create(device, hal::MemoryKind::host, 0, 0, 64, &host) != ZE_RESULT_SUCCESS ||
        aml::Area::create(device, hal::MemoryKind::device, 0, 0, 64, &dev) != ZE_RESULT_SUCCESS)
        return;
    const auto map_unmap = [&](aml::Area& area) {
        void* p = nullptr;
        return area.map(kMapBytes, &p) == ZE_RESULT_SUCCESS && area.unmap(p) == ZE_RESULT_SUCCESS;
    };
    const auto malloc_free = [] {
        void* p = std::malloc(kMapBytes);
        asm volatile("" : : "r"(p) : "memory");
        std::free(p);
        return p != nullptr;
    };
    const auto hal_alloc_free = [&] {
        void* p = nullptr;
        return device->allocate(hal::MemoryKind::device, kMapBytes, 64, 0, 0, &p) == ZE_RESULT_SUCCESS &&
               device->free(p) == ZE_RESULT_SUCCESS;
    };
    const double host_us = best_us(n, [&] { return map_unmap(*host); });
    const double malloc_us = best_us(n, malloc_free);
    const double dev_us = best_us(n, [&] { return map_unmap(*dev); });
    const double hal_us = best_us(n, hal_alloc_free);
    rows->push_back(row("area", "host mmap+munmap 4 KiB", host_us, malloc_us, "malloc+free"));
    rows->push_back(row("area", "device mmap+munmap 4 KiB", dev_us, hal_us, "HAL allocate+free"));
}

}  // namespace

std::vector<Row> aml_latency(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device) return rows;
    const size_t n = options.quick ? 500 : 20000;
    request_rows(device, n, &rows);
    area_rows(device, n, &rows);
    return rows;
}

}  // namespace zehal::bench
