// Pooled areas (contract §10) through the C API and the C++ class: alignment and kind of the
// upstream, no overlap, reuse, coalescing, the maximum, foreign and double frees, destroy
// with live mappings, trim, DMA on pooled memory, and statistics against a model under
// several threads.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "aml.h"
#include "aml/area.hpp"
#include "aml/area/ze.h"
#include "aml/area/ze_pool.h"
#include "aml/dma/ze.h"
#include "aml_test_util.hpp"

namespace {

using zehal::aml::test::handle;
using zehal::aml::test::sim_device;

struct Pooled {
    explicit Pooled(size_t initial = 0, size_t maximum = 0, size_t alignment = 64,
                    const zehal::sim::SimConfig& config = {}) {
        dev = sim_device(config);
        EXPECT_EQ(aml_area_ze_device_create(&upstream, handle(dev), 0, 0, alignment, AML_AREA_ZE_MMAP_DEVICE_FLAGS),
                  AML_SUCCESS);
        EXPECT_EQ(aml_area_ze_pool_create(&pool, upstream, initial, maximum), AML_SUCCESS);
    }
    ~Pooled() {
        if (pool) aml_area_ze_pool_destroy(&pool);
        aml_area_ze_destroy(&upstream);
    }
    struct aml_area_ze_pool_stats stats() const {
        struct aml_area_ze_pool_stats s {};
        EXPECT_EQ(aml_area_ze_pool_stats(pool, &s), AML_SUCCESS);
        return s;
    }
    zehal::hal::DeviceRef dev;
    aml_area* upstream = nullptr;
    aml_area* pool = nullptr;
};

TEST(Pool, CreateErrors) {
    Pooled p;
    aml_area* out = nullptr;
    EXPECT_EQ(aml_area_ze_pool_create(nullptr, p.upstream, 0, 0), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_pool_create(&out, nullptr, 0, 0), -AML_EINVAL);
    aml_area foreign{};
    EXPECT_EQ(aml_area_ze_pool_create(&out, &foreign, 0, 0), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_pool_create(&out, p.upstream, 2 << 20, 1 << 20), -AML_EINVAL);
    EXPECT_EQ(out, nullptr);
    struct aml_area_ze_pool_stats s {};
    EXPECT_EQ(aml_area_ze_pool_stats(nullptr, &s), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_pool_stats(p.upstream, &s), -AML_EINVAL);  // not a pool
    EXPECT_EQ(aml_area_ze_pool_stats(p.pool, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_pool_trim(nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_pool_trim(p.upstream), -AML_EINVAL);
    aml_area_ze_pool_destroy(nullptr);
}

TEST(Pool, InitialBytesAreReservedAtOnce) {
    Pooled p(8 << 20);
    const auto s = p.stats();
    EXPECT_EQ(s.bytes_reserved, 8u << 20);
    EXPECT_EQ(s.upstream_allocations, 1u);
    EXPECT_EQ(s.bytes_in_use, 0u);
}

TEST(Pool, AlignmentKindAndNoOverlap) {
    for (size_t alignment : {64u, 4096u}) {
        Pooled p(0, 0, alignment);
        std::mt19937 rng(7);
        std::map<uintptr_t, size_t> live;
        for (int i = 0; i < 500; ++i) {
            const size_t size = 1 + rng() % ((rng() % 8 == 0) ? (8u << 20) : 70000u);
            void* ptr = aml_area_mmap(p.pool, size, nullptr);
            ASSERT_NE(ptr, nullptr);
            const auto a = reinterpret_cast<uintptr_t>(ptr);
            EXPECT_EQ(a % alignment, 0u);
            auto next = live.lower_bound(a);
            if (next != live.end()) {
                EXPECT_LE(a + size, next->first);
            }
            if (next != live.begin()) {
                EXPECT_LE(std::prev(next)->first + std::prev(next)->second, a);
            }
            live.emplace(a, size);
            if (rng() % 3 == 0) {
                auto victim = live.begin();
                std::advance(victim, rng() % live.size());
                EXPECT_EQ(aml_area_munmap(p.pool, reinterpret_cast<void*>(victim->first), victim->second), AML_SUCCESS);
                live.erase(victim);
            }
        }
        zehal::hal::PointerInfo info;
        ASSERT_EQ(p.dev->pointer_info(reinterpret_cast<void*>(live.begin()->first), &info), ZE_RESULT_SUCCESS);
        EXPECT_EQ(info.kind, zehal::hal::MemoryKind::device);
        for (const auto& [a, size] : live)
            EXPECT_EQ(aml_area_munmap(p.pool, reinterpret_cast<void*>(a), size), AML_SUCCESS);
        EXPECT_EQ(p.stats().bytes_in_use, 0u);
    }
}

TEST(Pool, ReuseWithoutUpstreamCalls) {
    Pooled p;
    void* a = aml_area_mmap(p.pool, 4096, nullptr);
    ASSERT_NE(a, nullptr);
    const auto before = p.stats();
    ASSERT_EQ(aml_area_munmap(p.pool, a, 4096), AML_SUCCESS);
    void* b = aml_area_mmap(p.pool, 4096, nullptr);
    EXPECT_EQ(a, b);
    const auto after = p.stats();
    EXPECT_EQ(after.upstream_allocations, before.upstream_allocations);
    EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
    EXPECT_EQ(after.total_allocations, 2u);
    EXPECT_EQ(aml_area_munmap(p.pool, b, 4096), AML_SUCCESS);
}

TEST(Pool, LargeBlocksCoalesceOnFree) {
    Pooled p(64 << 20);
    const size_t big = 16u << 20;
    void* a = aml_area_mmap(p.pool, big, nullptr);
    void* b = aml_area_mmap(p.pool, big, nullptr);
    void* c = aml_area_mmap(p.pool, big, nullptr);
    ASSERT_TRUE(a && b && c);
    ASSERT_EQ(p.stats().upstream_allocations, 1u);
    ASSERT_EQ(aml_area_munmap(p.pool, a, big), AML_SUCCESS);
    ASSERT_EQ(aml_area_munmap(p.pool, b, big), AML_SUCCESS);
    // a and b merged: 32 MiB fit where they were, with no new chunk.
    void* d = aml_area_mmap(p.pool, 2 * big, nullptr);
    EXPECT_EQ(d, std::min(a, b));
    EXPECT_EQ(p.stats().upstream_allocations, 1u);
    EXPECT_EQ(aml_area_munmap(p.pool, c, big), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(p.pool, d, 2 * big), AML_SUCCESS);
}

TEST(Pool, TheMaximumIsExactAndAFailedMmapChangesNothing) {
    Pooled p(0, 4 << 20);
    void* a = aml_area_mmap(p.pool, 3 << 20, nullptr);
    ASSERT_NE(a, nullptr);
    const auto before = p.stats();
    EXPECT_LE(before.bytes_reserved, 4u << 20);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_area_mmap(p.pool, 2 << 20, nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_ENOMEM);
    const auto after = p.stats();
    EXPECT_EQ(after.bytes_reserved, before.bytes_reserved);
    EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
    EXPECT_EQ(after.allocations, before.allocations);
    // Small blocks still fit in what is left under the maximum.
    std::vector<void*> small;
    for (void* s; (s = aml_area_mmap(p.pool, 4096, nullptr)) != nullptr;) small.push_back(s);
    EXPECT_FALSE(small.empty());
    EXPECT_LE(p.stats().bytes_reserved, 4u << 20);
    for (void* s : small) EXPECT_EQ(aml_area_munmap(p.pool, s, 4096), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(p.pool, a, 3 << 20), AML_SUCCESS);
}

// The maximum holds under threads that allocate at once: never more reserved than it, every
// refusal is AML_ENOMEM, and what the refused calls asked for is never counted.
TEST(Pool, TheMaximumHoldsUnderThreads) {
    constexpr size_t kMaximum = 8u << 20;
    Pooled p(0, kMaximum);
    constexpr int kThreads = 4;
    std::atomic<uint64_t> refused{0};
    std::atomic<uint64_t> made{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::mt19937 rng(300 + t);
            std::vector<std::pair<void*, size_t>> mine;
            for (int i = 0; i < 2000; ++i) {
                if (mine.empty() || rng() % 2) {
                    const size_t size = 1 + rng() % (rng() % 4 ? 100000 : (3u << 20));
                    aml_errno = AML_SUCCESS;  // per thread
                    void* ptr = aml_area_mmap(p.pool, size, nullptr);
                    if (!ptr) {
                        EXPECT_EQ(aml_errno, AML_ENOMEM);
                        refused.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after join
                        continue;
                    }
                    made.fetch_add(1, std::memory_order_relaxed);  // relaxed: read after join
                    mine.emplace_back(ptr, size);
                } else {
                    ASSERT_EQ(aml_area_munmap(p.pool, mine.back().first, mine.back().second), AML_SUCCESS);
                    mine.pop_back();
                }
                EXPECT_LE(p.stats().bytes_reserved, kMaximum);
            }
            for (const auto& [ptr, size] : mine) EXPECT_EQ(aml_area_munmap(p.pool, ptr, size), AML_SUCCESS);
        });
    for (auto& t : threads) t.join();
    const auto s = p.stats();
    EXPECT_GT(refused.load(std::memory_order_relaxed), 0u);  // the maximum was reached
    EXPECT_EQ(s.total_allocations, made.load(std::memory_order_relaxed));
    EXPECT_EQ(s.bytes_in_use, 0u);
    EXPECT_EQ(s.allocations, 0u);
    EXPECT_LE(s.bytes_reserved, kMaximum);
    EXPECT_LE(s.peak_bytes_in_use, kMaximum);
}

TEST(Pool, ForeignDoubleAndMisSizedFreesAreRefused) {
    Pooled p;
    void* a = aml_area_mmap(p.pool, 1000, nullptr);
    ASSERT_NE(a, nullptr);
    void* other = aml_area_mmap(p.upstream, 1000, nullptr);
    EXPECT_EQ(aml_area_munmap(p.pool, other, 1000), -AML_EINVAL);
    EXPECT_EQ(aml_area_munmap(p.pool, static_cast<char*>(a) + 64, 1000), -AML_EINVAL);
    EXPECT_EQ(aml_area_munmap(p.pool, a, 1000), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(p.pool, a, 1000), -AML_EINVAL);
    EXPECT_EQ(aml_area_munmap(p.pool, nullptr, 1000), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(p.upstream, other, 1000), AML_SUCCESS);
    EXPECT_EQ(aml_area_mmap(p.pool, 0, nullptr), nullptr);
}

TEST(Pool, DestroyWithLiveMappingsIsBusy) {
    Pooled p;
    void* a = aml_area_mmap(p.pool, 4096, nullptr);
    aml_area* pool = p.pool;
    aml_errno = AML_SUCCESS;
    aml_area_ze_pool_destroy(&p.pool);
    EXPECT_EQ(aml_errno, AML_EBUSY);
    EXPECT_EQ(p.pool, pool);
    EXPECT_EQ(aml_area_munmap(p.pool, a, 4096), AML_SUCCESS);
    aml_area_ze_pool_destroy(&p.pool);
    EXPECT_EQ(p.pool, nullptr);
}

TEST(Pool, TrimGivesUnusedChunksBack) {
    Pooled p;
    std::vector<void*> blocks;
    for (int i = 0; i < 100; ++i) blocks.push_back(aml_area_mmap(p.pool, 64 << 10, nullptr));
    void* keep = aml_area_mmap(p.pool, 8 << 20, nullptr);
    for (void* b : blocks) ASSERT_EQ(aml_area_munmap(p.pool, b, 64 << 10), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_pool_trim(p.pool), AML_SUCCESS);
    const auto s = p.stats();
    EXPECT_EQ(s.bytes_in_use, 8u << 20);
    EXPECT_LT(s.bytes_reserved, 100u * (64 << 10) + (8u << 20));
    EXPECT_EQ(aml_area_munmap(p.pool, keep, 8 << 20), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_pool_trim(p.pool), AML_SUCCESS);
    EXPECT_EQ(p.stats().bytes_reserved, 0u);
    zehal::hal::PointerInfo info;
    EXPECT_NE(p.dev->pointer_info(keep, &info), ZE_RESULT_SUCCESS);  // the chunk went back
}

// 40,000 bytes fall in a class (48 KiB) whose block does not divide a 2 MiB slab: trim()
// still gives back every chunk once nothing is used, phase after phase.
TEST(Pool, TrimGivesBackSlabsOfEverySizeClass) {
    Pooled p;
    constexpr size_t kSize = 40'000;
    for (int phase = 0; phase < 5; ++phase) {
        std::vector<void*> blocks;
        for (int i = 0; i < 100; ++i) {
            blocks.push_back(aml_area_mmap(p.pool, kSize, nullptr));
            ASSERT_NE(blocks.back(), nullptr);
        }
        for (void* b : blocks) ASSERT_EQ(aml_area_munmap(p.pool, b, kSize), AML_SUCCESS);
        ASSERT_EQ(aml_area_ze_pool_trim(p.pool), AML_SUCCESS);
        const auto s = p.stats();
        EXPECT_EQ(s.bytes_in_use, 0u);
        EXPECT_EQ(s.bytes_reserved, 0u) << "phase " << phase;
    }
}

// Upstream out of memory: the pool gives back the blocks it caches for another class (one
// whose block does not divide the slab) and serves a large mapping from what it freed.
TEST(Pool, CachedBlocksAreGivenBackWhenUpstreamRunsOut) {
    zehal::sim::SimConfig config;
    config.memory_bytes = 64u << 20;
    Pooled p(0, 0, 64, config);
    constexpr size_t kSize = 40'000;
    std::vector<void*> blocks;
    for (int i = 0; i < 600; ++i) {
        blocks.push_back(aml_area_mmap(p.pool, kSize, nullptr));
        ASSERT_NE(blocks.back(), nullptr);
    }
    for (void* b : blocks) ASSERT_EQ(aml_area_munmap(p.pool, b, kSize), AML_SUCCESS);
    ASSERT_GT(p.stats().bytes_reserved, 24u << 20);  // too much left for 40 MiB more
    void* big = aml_area_mmap(p.pool, 40u << 20, nullptr);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(p.stats().bytes_in_use, 40u << 20);
    EXPECT_EQ(aml_area_munmap(p.pool, big, 40u << 20), AML_SUCCESS);
}

// Sizes whose rounding to the alignment overflows are refused, never wrapped around.
TEST(Pool, SizesThatOverflowAreRefused) {
    Pooled p(0, 0, 4096);
    aml_area* out = nullptr;
    EXPECT_EQ(aml_area_ze_pool_create(&out, p.upstream, SIZE_MAX, 0), -AML_ENOTSUP);
    EXPECT_EQ(aml_area_ze_pool_create(&out, p.upstream, SIZE_MAX, SIZE_MAX), -AML_ENOTSUP);
    EXPECT_EQ(aml_area_ze_pool_create(&out, p.upstream, SIZE_MAX - 4095, 0), -AML_ENOTSUP);  // the device's answer
    EXPECT_EQ(out, nullptr);
    ASSERT_EQ(aml_area_ze_pool_create(&out, p.upstream, 0, SIZE_MAX), AML_SUCCESS);
    for (size_t size : {SIZE_MAX, SIZE_MAX - 4095, SIZE_MAX / 2}) {
        for (aml_area* pool : {p.pool, out}) {
            aml_errno = AML_SUCCESS;
            EXPECT_EQ(aml_area_mmap(pool, size, nullptr), nullptr) << size;
            EXPECT_NE(aml_errno, AML_SUCCESS);
        }
    }
    void* a = aml_area_mmap(out, 4096, nullptr);
    EXPECT_NE(a, nullptr);
    EXPECT_EQ(aml_area_munmap(out, a, 4096), AML_SUCCESS);
    EXPECT_EQ(p.stats().bytes_reserved, 0u);
    aml_area_ze_pool_destroy(&out);
}

// An upstream alignment so large that no class multiple of it fits a size_t: one class, and
// every mapping is an error, never a crash.
TEST(Pool, AHugeAlignmentHasOneClassAndNoOverflow) {
    Pooled p(0, 0, size_t{1} << 63);
    for (size_t size : {size_t{1}, size_t{1} << 63, SIZE_MAX}) {
        aml_errno = AML_SUCCESS;
        EXPECT_EQ(aml_area_mmap(p.pool, size, nullptr), nullptr) << size;
        EXPECT_NE(aml_errno, AML_SUCCESS);
    }
    EXPECT_EQ(p.stats().bytes_reserved, 0u);
}

TEST(Pool, DmaCopiesThroughPooledMemory) {
    Pooled p;
    aml_area* host = nullptr;
    ASSERT_EQ(aml_area_ze_host_create(&host, 0, 64), AML_SUCCESS);
    aml_area* host_pool = nullptr;
    ASSERT_EQ(aml_area_ze_pool_create(&host_pool, host, 0, 0), AML_SUCCESS);
    aml_dma* dma = nullptr;
    ASSERT_EQ(aml_dma_ze_create(&dma, handle(p.dev), 1, 0), AML_SUCCESS);
    constexpr size_t kBytes = 100000;
    auto* src = static_cast<unsigned char*>(aml_area_mmap(host_pool, kBytes, nullptr));
    void* mid = aml_area_mmap(p.pool, kBytes, nullptr);
    auto* back = static_cast<unsigned char*>(aml_area_mmap(host_pool, kBytes, nullptr));
    std::memset(src, 0x77, kBytes);
    ASSERT_EQ(aml_dma_ze_copy_signal(dma, nullptr, mid, src, kBytes, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_ze_copy_signal(dma, nullptr, back, mid, kBytes, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    EXPECT_EQ(back[kBytes - 1], 0x77);
    EXPECT_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(host_pool, src, kBytes), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(host_pool, back, kBytes), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(p.pool, mid, kBytes), AML_SUCCESS);
    aml_area_ze_pool_destroy(&host_pool);
    aml_area_ze_destroy(&host);
}

TEST(Pool, StatisticsMatchAModelUnderThreads) {
    Pooled p;
    constexpr int kThreads = 4;
    std::vector<std::thread> threads;
    std::mutex mu;
    uint64_t model_total = 0;
    uint64_t model_in_use = 0;
    uint64_t model_peak_one = 0;  // the largest peak of one thread
    uint64_t model_peak_sum = 0;  // the sum of every thread's peak
    std::vector<std::pair<void*, size_t>> left;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            std::mt19937 rng(100 + t);
            std::vector<std::pair<void*, size_t>> mine;
            uint64_t total = 0;
            uint64_t in_use = 0;
            uint64_t peak = 0;
            for (int i = 0; i < 3000; ++i) {
                if (mine.empty() || rng() % 2) {
                    const size_t size = 1 + rng() % (rng() % 16 ? 20000 : (6u << 20));
                    void* ptr = aml_area_mmap(p.pool, size, nullptr);
                    ASSERT_NE(ptr, nullptr);
                    mine.emplace_back(ptr, size);
                    ++total;
                    peak = std::max(peak, in_use += size);
                } else {
                    const size_t k = rng() % mine.size();
                    ASSERT_EQ(aml_area_munmap(p.pool, mine[k].first, mine[k].second), AML_SUCCESS);
                    in_use -= mine[k].second;
                    mine[k] = mine.back();
                    mine.pop_back();
                }
            }
            std::lock_guard lock(mu);
            model_total += total;
            model_peak_one = std::max(model_peak_one, peak);
            model_peak_sum += peak;
            for (const auto& m : mine) model_in_use += m.second;
            left.insert(left.end(), mine.begin(), mine.end());
        });
    for (auto& t : threads) t.join();
    const auto s = p.stats();
    EXPECT_EQ(s.total_allocations, model_total);
    EXPECT_EQ(s.bytes_in_use, model_in_use);
    EXPECT_GE(s.peak_bytes_in_use, model_in_use);
    EXPECT_GE(s.peak_bytes_in_use, model_peak_one);
    EXPECT_LE(s.peak_bytes_in_use, model_peak_sum);
    EXPECT_GE(s.bytes_reserved, s.bytes_in_use);
    EXPECT_EQ(s.allocations, left.size());
    for (const auto& [ptr, size] : left) EXPECT_EQ(aml_area_munmap(p.pool, ptr, size), AML_SUCCESS);
    EXPECT_EQ(p.stats().bytes_in_use, 0u);
}

// One thread: the peak is the model's to the byte, small and large sizes mixed.
TEST(Pool, PeakMatchesAModelExactly) {
    Pooled p;
    std::mt19937 rng(7);
    std::vector<std::pair<void*, size_t>> live;
    uint64_t in_use = 0;
    uint64_t peak = 0;
    for (int i = 0; i < 4000; ++i) {
        if (live.empty() || rng() % 3) {
            const size_t size = 1 + rng() % (rng() % 8 ? 50000 : (3u << 20));
            void* ptr = aml_area_mmap(p.pool, size, nullptr);
            ASSERT_NE(ptr, nullptr);
            live.emplace_back(ptr, size);
            peak = std::max(peak, in_use += size);
        } else {
            const size_t k = rng() % live.size();
            ASSERT_EQ(aml_area_munmap(p.pool, live[k].first, live[k].second), AML_SUCCESS);
            in_use -= live[k].second;
            live[k] = live.back();
            live.pop_back();
        }
        if (i % 500 == 0) {
            EXPECT_EQ(p.stats().peak_bytes_in_use, peak);
        }
    }
    EXPECT_EQ(p.stats().peak_bytes_in_use, peak);
    EXPECT_EQ(p.stats().bytes_in_use, in_use);
    for (const auto& [ptr, size] : live) EXPECT_EQ(aml_area_munmap(p.pool, ptr, size), AML_SUCCESS);
}

// Threads one after the other: what one held and gave back does not add to the next's.
TEST(Pool, PeakOfThreadsInTurnIsTheLargestOfThem) {
    Pooled p;
    for (size_t bytes : {size_t{3000}, size_t{5000}, size_t{2} << 20, size_t{4000}}) {
        std::thread([&] {
            void* ptr = aml_area_mmap(p.pool, bytes, nullptr);
            ASSERT_NE(ptr, nullptr);
            EXPECT_EQ(aml_area_munmap(p.pool, ptr, bytes), AML_SUCCESS);
        }).join();
    }
    EXPECT_EQ(p.stats().peak_bytes_in_use, size_t{2} << 20);
}

// Threads holding memory at once: the peak is their sum, though each counts on its own.
TEST(Pool, PeakOfThreadsAtOnceIsTheirSum) {
    Pooled p;
    constexpr int kThreads = 6;
    std::atomic<int> holding{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&, t] {
            const size_t bytes = t % 2 ? 1000 + t : (1u << 20) * 2 + t;
            void* ptr = aml_area_mmap(p.pool, bytes, nullptr);
            ASSERT_NE(ptr, nullptr);
            // Relaxed: a barrier of counts only; the pool orders its own data.
            holding.fetch_add(1, std::memory_order_relaxed);
            while (holding.load(std::memory_order_relaxed) < kThreads) std::this_thread::yield();
            EXPECT_EQ(aml_area_munmap(p.pool, ptr, bytes), AML_SUCCESS);
        });
    for (auto& t : threads) t.join();
    uint64_t sum = 0;
    for (int t = 0; t < kThreads; ++t) sum += t % 2 ? 1000 + t : (1u << 20) * 2 + t;
    EXPECT_EQ(p.stats().peak_bytes_in_use, sum);
    EXPECT_EQ(p.stats().bytes_in_use, 0u);
}

// Threads cycling one block each at once, the pool's hardest case for its peak: the peak
// stays between the most one thread held and the sum of what each held.
TEST(Pool, PeakOfThreadsCyclingAtOnceIsBoundedByTheirSum) {
    Pooled p;
    constexpr int kThreads = 8;
    constexpr size_t kBytes = 1u << 20;
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
        threads.emplace_back([&] {
            // Relaxed: a start line only; the pool orders its own data.
            ready.fetch_add(1, std::memory_order_relaxed);
            while (ready.load(std::memory_order_relaxed) < kThreads) std::this_thread::yield();
            for (int i = 0; i < 3000; ++i) {
                void* ptr = aml_area_mmap(p.pool, kBytes, nullptr);
                ASSERT_NE(ptr, nullptr);
                ASSERT_EQ(aml_area_munmap(p.pool, ptr, kBytes), AML_SUCCESS);
            }
        });
    for (auto& t : threads) t.join();
    const auto s = p.stats();
    EXPECT_GE(s.peak_bytes_in_use, kBytes);
    EXPECT_LE(s.peak_bytes_in_use, kThreads * kBytes);
    EXPECT_EQ(s.bytes_in_use, 0u);
    EXPECT_EQ(s.allocations, 0u);
    EXPECT_EQ(s.total_allocations, kThreads * 3000u);
    // Afterwards, one thread alone: what it holds beyond the peak raises it to the byte.
    void* big = aml_area_mmap(p.pool, s.peak_bytes_in_use + 4096, nullptr);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(p.stats().peak_bytes_in_use, s.peak_bytes_in_use + 4096);
    EXPECT_EQ(aml_area_munmap(p.pool, big, s.peak_bytes_in_use + 4096), AML_SUCCESS);
}

// Blocks made on one thread and given back on others count where they were made; a block
// given back by two threads at once is given back once.
TEST(Pool, BlocksGivenBackByOtherThreadsAreCountedOnce) {
    Pooled p;
    std::vector<std::pair<void*, size_t>> made;
    std::thread([&] {
        for (size_t bytes : {size_t{100}, size_t{70000}, size_t{3} << 20, size_t{5} << 20}) {
            void* ptr = aml_area_mmap(p.pool, bytes, nullptr);
            ASSERT_NE(ptr, nullptr);
            made.emplace_back(ptr, bytes);
        }
    }).join();
    ASSERT_EQ(made.size(), 4u);
    EXPECT_EQ(p.stats().allocations, 4u);
    for (const auto& [ptr, bytes] : made) {
        std::atomic<int> freed{0};
        std::vector<std::thread> racers;
        for (int t = 0; t < 3; ++t)
            racers.emplace_back([&, ptr = ptr, bytes = bytes] {
                if (aml_area_munmap(p.pool, ptr, bytes) == AML_SUCCESS) freed.fetch_add(1, std::memory_order_relaxed);
            });
        for (auto& r : racers) r.join();
        // Relaxed: read after the joins.
        EXPECT_EQ(freed.load(std::memory_order_relaxed), 1);
    }
    const auto s = p.stats();
    EXPECT_EQ(s.bytes_in_use, 0u);
    EXPECT_EQ(s.allocations, 0u);
    EXPECT_EQ(s.peak_bytes_in_use, 100u + 70000u + (3u << 20) + (5u << 20));
}

// A snapshot taken while threads work is one instant: never more in use than the peak,
// never more mappings than were made.
TEST(Pool, SnapshotsUnderThreadsAreConsistent) {
    Pooled p;
    std::atomic<bool> stop{false};
    std::vector<std::thread> threads;
    for (int t = 0; t < 3; ++t)
        threads.emplace_back([&, t] {
            std::mt19937 rng(40 + t);
            // Relaxed: a stop flag; the pool orders its own data.
            while (!stop.load(std::memory_order_relaxed)) {
                const size_t size = 1 + rng() % (rng() % 8 ? 9000 : (2u << 20));
                void* ptr = aml_area_mmap(p.pool, size, nullptr);
                ASSERT_NE(ptr, nullptr);
                ASSERT_EQ(aml_area_munmap(p.pool, ptr, size), AML_SUCCESS);
            }
        });
    uint64_t last_peak = 0;
    for (int i = 0; i < 300; ++i) {
        const auto s = p.stats();
        EXPECT_LE(s.bytes_in_use, s.peak_bytes_in_use);
        EXPECT_LE(s.allocations, s.total_allocations);
        EXPECT_LE(s.allocations, 3u);
        EXPECT_GE(s.peak_bytes_in_use, last_peak);
        last_peak = s.peak_bytes_in_use;
    }
    stop.store(true, std::memory_order_relaxed);  // relaxed: see the loop
    for (auto& t : threads) t.join();
    EXPECT_EQ(p.stats().bytes_in_use, 0u);
}

}  // namespace
