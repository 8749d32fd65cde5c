// Areas, buffers and DMA: zehal::Area (device, shared, host), PooledArea, Buffer, Dma,
// Request, and the C function under Dma::copy (aml_dma_ze_copy_signal).
#include <gtest/gtest.h>

#include <zehal/zehal.hpp>

#include <cstdint>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "expect_code.hpp"

namespace {

zehal::Device sim() { return zehal::Device::get("sim"); }

bool aligned(const void* p, size_t alignment) { return reinterpret_cast<uintptr_t>(p) % alignment == 0; }

TEST(CppApiMemory, AreasMapAlignedBuffers) {
    const zehal::Device d = sim();
    for (const zehal::Area& area :
         {zehal::Area::host(4096), zehal::Area::device(d, 4096), zehal::Area::shared(d, 4096)}) {
        zehal::Buffer b = area.map(100);
        EXPECT_NE(b.data(), nullptr);
        EXPECT_EQ(b.size(), 100u);
        EXPECT_TRUE(aligned(b.data(), 4096));
    }
    zehal::Buffer shared = zehal::Area::shared(d).map(64);
    std::memset(shared.data(), 1, 64);  // shared memory is host-accessible
    zehal::Buffer host = zehal::Area::host().map(64);
    std::memset(host.data(), 2, 64);
}

TEST(CppApiMemory, BuffersMoveAndReset) {
    zehal::Buffer empty;
    EXPECT_EQ(empty.data(), nullptr);
    EXPECT_EQ(empty.size(), 0u);
    empty.reset();                                   // nothing to unmap
    zehal::Buffer a = zehal::Area::host().map(256);  // the Area goes: the buffer keeps it
    void* p = a.data();
    zehal::Buffer b = std::move(a);
    EXPECT_EQ(a.data(), nullptr);
    EXPECT_EQ(b.data(), p);
    zehal::Buffer c = zehal::Area::host().map(64);
    c = std::move(b);  // unmaps c's own first
    EXPECT_EQ(c.data(), p);
    EXPECT_EQ(c.size(), 256u);
    std::memset(c.data(), 0, 256);
    c.reset();
    c.reset();
    EXPECT_EQ(c.data(), nullptr);
}

TEST(CppApiMemory, BadAreasAndMapsThrow) {
    const zehal::Device d = sim();
    EXPECT_ZE_ERROR(zehal::Area::host(48), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::Area::device(d, 3), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::Area::device(d, 64, 1000), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::Area::host().map(0), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const uint64_t too_big = d.properties().max_allocation_bytes + 1;
    EXPECT_THROW(zehal::Area::device(d).map(static_cast<size_t>(too_big)), zehal::Error);
    EXPECT_THROW(zehal::Area::host().map(SIZE_MAX), zehal::Error);
}

TEST(CppApiMemory, PooledAreasServeMapsAndKeepTheirUpstream) {
    const zehal::Device d = sim();
    zehal::Buffer kept;
    {
        zehal::PooledArea pool(zehal::Area::device(d, 256), 1 << 20);  // the upstream Area goes at once
        EXPECT_EQ(pool.stats().bytes_reserved, 1u << 20);
        zehal::Buffer a = pool.map(1000);
        EXPECT_TRUE(aligned(a.data(), 256));
        kept = pool.map(4096);
        const zehal::PoolStats s = pool.stats();
        EXPECT_EQ(s.bytes_in_use, 1000u + 4096u);
        EXPECT_EQ(s.allocations, 2u);
        EXPECT_EQ(s.upstream_allocations, 1u);
        a.reset();
        zehal::Buffer again = pool.map(1000);
        EXPECT_GE(pool.stats().cache_hits, 1u);
        const zehal::Area as_area = pool;  // a PooledArea is an Area: copies share the pool
        zehal::Buffer c = as_area.map(64);
        EXPECT_EQ(pool.stats().allocations, 3u);
    }
    // The pool outlives its last PooledArea while `kept` is mapped from it: a copy reaches it.
    zehal::Buffer src = zehal::Area::host().map(4096);
    std::memset(src.data(), 5, 4096);
    zehal::Buffer back = zehal::Area::host().map(4096);
    zehal::Dma dma(d);
    dma.copy(kept, src).wait();
    dma.copy(back, kept).wait();
    EXPECT_EQ(static_cast<unsigned char*>(back.data())[4095], 5);
}

TEST(CppApiMemory, BadPoolsThrow) {
    const zehal::Area host = zehal::Area::host();
    EXPECT_ZE_ERROR(zehal::PooledArea(host, 2 << 20, 1 << 20), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    zehal::PooledArea capped(host, 0, 1 << 20);
    EXPECT_ZE_ERROR(capped.map(2 << 20), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    EXPECT_EQ(capped.stats().bytes_reserved, 0u);  // the failed map changed nothing
    zehal::Buffer b = capped.map(1000);
    b.reset();
    capped.trim();
    EXPECT_EQ(capped.stats().bytes_reserved, 0u);
    EXPECT_ZE_ERROR(capped.map(0), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(CppApiMemory, ThreadsMapFromOnePool) {
    const zehal::PooledArea pool(zehal::Area::host());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t)
        threads.emplace_back([&pool, t] {
            for (int i = 0; i < 200; ++i) {
                zehal::Buffer b = pool.map(static_cast<size_t>(64 + 8 * (i + t)));
                std::memset(b.data(), t, b.size());
            }
        });
    for (auto& t : threads) t.join();
    const zehal::PoolStats s = pool.stats();
    EXPECT_EQ(s.bytes_in_use, 0u);
    EXPECT_EQ(s.allocations, 0u);
    EXPECT_EQ(s.total_allocations, 800u);
}

TEST(CppApiMemory, CopyRoundTripWithTimestamps) {
    const zehal::Device d = sim();
    constexpr size_t kBytes = 64u << 10;
    zehal::Buffer src = zehal::Area::host().map(kBytes);
    zehal::Buffer mid = zehal::Area::device(d).map(kBytes);
    zehal::Buffer back = zehal::Area::host().map(kBytes);
    for (size_t i = 0; i < kBytes; ++i) static_cast<unsigned char*>(src.data())[i] = static_cast<unsigned char>(i * 7);
    zehal::Dma dma(d);
    const zehal::EventPool pool(d, 1, zehal::Timestamps::mapped);
    const zehal::Event e = pool.event(0);
    zehal::Request r = dma.copy(mid, src, &e);
    r.wait();
    EXPECT_TRUE(r.done());
    r.wait();  // once: nothing left to wait for
    EXPECT_TRUE(e.query());
    EXPECT_EQ(e.kernel_timestamps().size(), 1u);
    const auto ns = e.synchronized_timestamps();
    ASSERT_EQ(ns.size(), 1u);
    EXPECT_LE(ns[0].global.kernel_start, ns[0].global.kernel_end);
    dma.copy(back, mid).wait();
    EXPECT_EQ(std::memcmp(back.data(), src.data(), kBytes), 0);
}

TEST(CppApiMemory, RequestsMoveCancelAndGoUnwaited) {
    const zehal::Device d = sim();
    zehal::Buffer a = zehal::Area::host().map(1 << 16), b = zehal::Area::device(d).map(1 << 16);
    zehal::Dma dma(d);
    zehal::Request r1 = dma.copy(b, a);
    zehal::Request r2 = std::move(r1);
    EXPECT_TRUE(r1.done());  // moved from: holds nothing
    r1.wait();
    r2 = dma.copy(b, a);  // the first copy is cancelled (or waited for) here
    r2.cancel();
    EXPECT_TRUE(r2.done());
    for (int i = 0; i < 16; ++i) (void)dma.copy(b, a);  // each dropped at once
    { zehal::Dma copy_of = dma; }                       // a copy of the engine shares it
    dma.barrier();
    dma.copy_detached(b.data(), a.data(), 64);
    dma.barrier();
}

TEST(CppApiMemory, RequestsOutliveTheirEngineObject) {
    const zehal::Device d = sim();
    zehal::Buffer a = zehal::Area::host().map(4096), b = zehal::Area::host().map(4096);
    std::memset(a.data(), 9, 4096);
    zehal::Request r = zehal::Dma(d).copy(b, a);
    r.wait();
    EXPECT_EQ(static_cast<unsigned char*>(b.data())[4095], 9);
}

TEST(CppApiMemory, BadCopiesThrow) {
    const zehal::Device d = sim();
    zehal::Buffer small = zehal::Area::host().map(64);
    zehal::Buffer big = zehal::Area::host().map(128);
    zehal::Dma dma(d);
    EXPECT_ZE_ERROR(dma.copy(small, big), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_ZE_ERROR(dma.copy(small.data(), small.data(), 64), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    EXPECT_ZE_ERROR(dma.copy(nullptr, big.data(), 64), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(dma.copy(small.data(), nullptr, 64), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(dma.copy(small.data(), big.data(), 0), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(dma.copy_detached(nullptr, big.data(), 64), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    zehal::Event moved_from = zehal::EventPool(d, 1).event(0);
    const zehal::Event event = std::move(moved_from);
    EXPECT_ZE_ERROR(dma.copy(small.data(), big.data(), 64, &moved_from), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_ZE_ERROR(zehal::Dma(d, 7, 0), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_ZE_ERROR(zehal::Dma(d, 1, 1000), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(CppApiMemory, CopySignalRejectsBadEngines) {
    zehal::Buffer a = zehal::Area::host().map(64), b = zehal::Area::host().map(64);
    EXPECT_EQ(aml_dma_ze_copy_signal(nullptr, nullptr, b.data(), a.data(), 64, nullptr), -AML_EINVAL);
    aml_dma foreign{};
    EXPECT_EQ(aml_dma_ze_copy_signal(&foreign, nullptr, b.data(), a.data(), 64, nullptr), -AML_EINVAL);
    zehal::Dma dma(sim());
    aml_dma_request* req = nullptr;
    EXPECT_EQ(aml_dma_ze_copy_signal(dma.handle(), &req, b.data(), a.data(), 0, nullptr), -AML_EINVAL);
    EXPECT_EQ(req, nullptr);
    ASSERT_EQ(aml_dma_ze_copy_signal(dma.handle(), &req, b.data(), a.data(), 64, nullptr), AML_SUCCESS);
    EXPECT_EQ(aml_dma_wait(dma.handle(), &req), AML_SUCCESS);
}

TEST(CppApiMemory, ThreadsShareOneEngine) {
    const zehal::Device d = sim();
    zehal::Dma dma(d);
    const zehal::Area host = zehal::Area::host();
    std::vector<std::thread> threads;
    std::vector<int> ok(4, 0);
    for (size_t t = 0; t < ok.size(); ++t)
        threads.emplace_back([&, t] {
            zehal::Buffer a = host.map(4096), b = host.map(4096);
            for (int i = 0; i < 100; ++i) {
                std::memset(a.data(), i, 4096);
                dma.copy(b, a).wait();
                ok[t] += static_cast<unsigned char*>(b.data())[4095] == static_cast<unsigned char>(i);
            }
        });
    for (auto& t : threads) t.join();
    for (int n : ok) EXPECT_EQ(n, 100);
}

}  // namespace
