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

// What kRounds rounds of `threads` threads each running `n` ops at once gave (medians).
struct Timing {
    double us = 0;          // the mean time of one op in the slowest thread (0: an op failed)
    double mops_per_s = 0;  // ops of every thread per second of the round, start to last end
};

// Runs the rounds; every thread's calls are timed, and the round's span runs from the first
// thread's start to the last thread's end (threads beyond the cores wait their turn in it).
// Each thread first makes a tenth as many calls untimed, before the start line, so that the
// figure is a steady state's (as threads of a pool see it), not a new thread's first calls.
template <typename Op>
Timing time_rounds(size_t n, unsigned threads, Op op) {
    std::vector<double> us;
    std::vector<double> rates;
    for (int round = 0; round < kRounds; ++round) {
        std::atomic<bool> failed{false};
        std::atomic<unsigned> ready{0};
        std::vector<uint64_t> starts(threads, 0);
        std::vector<uint64_t> ends(threads, 0);
        std::vector<std::thread> pool;
        for (unsigned t = 0; t < threads; ++t)
            pool.emplace_back([&, t] {
                for (size_t i = 0; i < n / 10 + 1; ++i)
                    if (!op()) failed.store(true, std::memory_order_relaxed);  // relaxed: read after join
                // Relaxed: a start line only; the timing is each thread's own.
                ready.fetch_add(1, std::memory_order_relaxed);
                while (ready.load(std::memory_order_relaxed) < threads) std::this_thread::yield();
                starts[t] = host_now_ns();
                for (size_t i = 0; i < n; ++i)
                    if (!op()) {
                        failed.store(true, std::memory_order_relaxed);  // relaxed: read after join
                        break;
                    }
                ends[t] = host_now_ns();
            });
        for (auto& th : pool) th.join();
        if (failed.load(std::memory_order_relaxed)) return {};
        double slowest = 0;
        for (unsigned t = 0; t < threads; ++t) slowest = std::max(slowest, static_cast<double>(ends[t] - starts[t]));
        us.push_back(slowest / 1e3 / static_cast<double>(n));
        const auto span = *std::max_element(ends.begin(), ends.end()) - *std::min_element(starts.begin(), starts.end());
        rates.push_back(static_cast<double>(n) * threads * 1e3 / static_cast<double>(std::max<uint64_t>(span, 1)));
    }
    std::nth_element(us.begin(), us.begin() + kRounds / 2, us.end());
    std::nth_element(rates.begin(), rates.begin() + kRounds / 2, rates.end());
    return {us[kRounds / 2], rates[kRounds / 2]};
}

// The median time of one op (µs), as time_rounds measures it.
template <typename Op>
double median_us(size_t n, unsigned threads, Op op) {
    return time_rounds(n, threads, op).us;
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

// Pairs per second over every thread (M/s) beside one thread's: the ratio is the speed-up.
Row throughput_row(std::string name, double mpairs_per_s, double one_thread) {
    Row r = row(std::move(name) + ", all threads", mpairs_per_s, one_thread, "1 thread");
    r.unit = "Mpairs/s";
    r.ratio = mpairs_per_s / one_thread;  // a rate: value / baseline
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
        const double unpooled_us = median_us(10, 1, map_unmap(*plain));
        const std::string size = bytes_name(bytes);
        double one_thread_rate = 0;
        for (unsigned threads : {1u, 2u, 4u, 16u}) {
            if (threads > 2 && (threads > cores * 2 || options.quick)) continue;
            const size_t calls = threads > 1 ? n / 2 : n;
            // Pooled calls are short: five times as many, so that each thread runs for
            // milliseconds and the start of the threads weighs little in the span.
            const Timing pooled_timing = time_rounds(calls * 5, threads, map_unmap(*pooled));
            const double pool_us = pooled_timing.us;
            const std::string what = "pooled device mmap+munmap " + size + ", " + std::to_string(threads) + " thread" +
                                     (threads > 1 ? "s" : "");
            if (threads == 1)
                one_thread_rate = pooled_timing.mops_per_s;
            else if (pool_us > 0 && one_thread_rate > 0)
                rows.push_back(throughput_row(what, pooled_timing.mops_per_s, one_thread_rate));
            rows.push_back(row(what, pool_us, median_us(calls * 5, threads, malloc_free), "malloc+free"));
            // Unpooled calls cost from a fraction of a microsecond (sim) to a hundred (a GPU
            // driver's allocation, slower still from many threads): as many as fit in about
            // 20 ms of one thread at one thread's pace, between 10 and `calls`.
            const size_t slow = std::clamp<size_t>(static_cast<size_t>(20'000 / std::max(unpooled_us, 1e-3)), 10,
                                                   calls);
            rows.push_back(row(what, pool_us, median_us(slow, threads, map_unmap(*plain)), "unpooled area"));
            rows.push_back(row(what, pool_us, median_us(slow, threads, hal_alloc_free), "HAL allocate+free"));
        }
    }
    return rows;
}

}  // namespace zehal::bench
