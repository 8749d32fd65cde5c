// Pooled areas: mmap+munmap of a pooled area beside malloc+free, the unpooled area and the
// HAL's allocate+free, from 1 and more threads at once.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "aml/area.hpp"
#include "benchmarks.hpp"
#include "common/clock.hpp"

namespace zehal::bench {

namespace {

constexpr int kRounds = 9;  // the median of nine rounds

// Median over kRounds of the mean time (µs) of one `op` when `threads` threads each run
// `n` of them at once (every thread's calls are timed; the round's figure is the slowest
// thread's mean). 0 when an op fails.
template <typename Op>
double median_us(size_t n, unsigned threads, Op op) {
    std::vector<double> rounds;
    for (int round = 0; round < kRounds; ++round) {
        std::atomic<bool> failed{false};
        std::atomic<unsigned> ready{0};
        std::vector<double> per_thread(threads, 0);
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                // Relaxed: a start line only; the timing is each thread's own.
                ready.fetch_add(1, std::memory_order_relaxed);
                while (ready.load(std::memory_order_relaxed) < threads) std::this_thread::yield();
                const uint64_t t0 = host_now_ns();
                for (size_t i = 0; i < n; ++i)
                    if (!op()) {
                        failed.store(true, std::memory_order_relaxed);  // relaxed: read after join
                        break;
                    }
                per_thread[t] = static_cast<double>(host_now_ns() - t0) / 1e3 / static_cast<double>(n);
            });
        for (auto& th : pool) th.join();
        if (failed.load(std::memory_order_relaxed)) return 0;
        rounds.push_back(*std::max_element(per_thread.begin(), per_thread.end()));
    }
    std::nth_element(rounds.begin(), rounds.begin() + kRounds / 2, rounds.end());
    return rounds[kRounds / 2];
}

Row row(std::string name, double value, double baseline, std::string baseline_name) {
    Row r;
    r.suite = "pool";
    r.name = std::move(name);
    r.value = value;
    r.unit = "us";
    r.baseline = baseline;
    r.baseline_name = std::move(baseline_name);
    r.ratio = value > 0 ? baseline / value : 0;  // a time: baseline / value, higher is better
    return r;
}

std::string bytes_name(size_t bytes) {
    return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes >> 10) + " KiB";
}

}  // namespace

std::vector<Row> pool_latency(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device) return rows;
    std::shared_ptr<aml::Area> plain;
    std::shared_ptr<aml::Area> pooled;
    if (aml::Area::create(device, hal::MemoryKind::device, 0, 0, 256, &plain) != ZE_RESULT_SUCCESS ||
        aml::Area::create_pool(plain, 0, 0, &pooled) != ZE_RESULT_SUCCESS)
        return rows;
    const size_t n = options.quick ? 200 : 20000;
    const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (size_t bytes : {size_t{4} << 10, size_t{1} << 20}) {
        const auto map_unmap = [bytes](aml::Area& area) {
            return [&area, bytes] {
                void* p = nullptr;
                return area.map(bytes, &p) == ZE_RESULT_SUCCESS && area.unmap(p, bytes) == ZE_RESULT_SUCCESS;
            };
        };
        const auto malloc_free = [bytes] {
            void* p = std::malloc(bytes);
            asm volatile("" : : "r"(p) : "memory");
            std::free(p);
            return p != nullptr;
        };
        const auto hal_alloc_free = [&device, bytes] {
            void* p = nullptr;
            return device->allocate(hal::MemoryKind::device, bytes, 256, 0, 0, &p) == ZE_RESULT_SUCCESS &&
                   device->free(p) == ZE_RESULT_SUCCESS;
        };
        median_us(n / 10 + 1, 1, map_unmap(*pooled));  // warm-up: the pool takes its chunks
        const std::string size = bytes_name(bytes);
        for (unsigned threads : {1u, 2u, 4u, 16u}) {
            if (threads > 2 && (threads > cores * 2 || options.quick)) continue;
            const size_t calls = threads > 1 ? n / 2 : n;
            const double pool_us = median_us(calls, threads, map_unmap(*pooled));
            const std::string what =
                "pooled device mmap+munmap " + size + ", " + std::to_string(threads) + " thread" + (threads > 1 ? "s" : "");
            rows.push_back(row(what, pool_us, median_us(calls, threads, malloc_free), "malloc+free"));
            const size_t slow = std::max<size_t>(calls / (bytes > (64u << 10) ? 20 : 1), 10);
            rows.push_back(row(what, pool_us, median_us(slow, threads, map_unmap(*plain)), "unpooled area"));
            rows.push_back(row(what, pool_us, median_us(slow, threads, hal_alloc_free), "HAL allocate+free"));
        }
    }
    return rows;
}

}  // namespace zehal::bench
