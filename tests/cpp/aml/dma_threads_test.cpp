// Many threads on one engine: submissions with and without requests, waits and barriers at
// once, every byte checked; and areas mapped from several threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "aml.h"
#include "aml/area.hpp"
#include "aml/area/ze.h"
#include "aml/dma.hpp"
#include "aml/dma/ze.h"
#include "aml_test_util.hpp"

namespace {

using zehal::aml::Area;
using zehal::aml::Dma;
using zehal::aml::Request;
using zehal::aml::test::handle;
namespace hal = zehal::hal;

constexpr int kThreads = 8;

TEST(DmaThreads, EightThreadsSubmitToOneEngineThroughTheCApi) {
    hal::DeviceRef dev = zehal::aml::test::sim_device();
    aml_area* host = nullptr;
    aml_area* device = nullptr;
    aml_dma* dma = nullptr;
    ASSERT_EQ(aml_area_ze_host_create(&host, 0, 64), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_device_create(&device, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    ASSERT_EQ(aml_dma_ze_create(&dma, handle(dev), 1, 0), AML_SUCCESS);

    constexpr size_t kChunk = 2048, kPerThread = 64, kSlice = kChunk * kPerThread, kSize = kSlice * kThreads;
    auto* src = static_cast<unsigned char*>(aml_area_mmap(host, kSize, nullptr));
    auto* mid = static_cast<unsigned char*>(aml_area_mmap(device, kSize, nullptr));
    auto* back = static_cast<unsigned char*>(aml_area_mmap(host, kSize, nullptr));
    ASSERT_TRUE(src && mid && back);
    for (size_t i = 0; i < kSize; ++i) src[i] = static_cast<unsigned char>(i * 13 + i / 4096);
    std::memset(back, 0, kSize);

    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            const size_t base = t * kSlice;
            for (size_t i = 0; i < kPerThread; ++i) {
                const size_t off = base + i * kChunk;
                // Host -> device with a request (odd threads) or fire-and-forget (even threads),
                // then device -> host behind it on the same (in-order) engine.
                aml_dma_request* r = nullptr;
                if (aml_dma_async_copy_custom(dma, t % 2 ? &r : nullptr, reinterpret_cast<aml_layout*>(mid + off),
                                              reinterpret_cast<aml_layout*>(src + off), aml_dma_ze_memcpy_op,
                                              reinterpret_cast<void*>(kChunk)) != AML_SUCCESS)
                    ++failures;
                if (r && aml_dma_wait(dma, &r) != AML_SUCCESS) ++failures;
                if (aml_dma_async_copy_custom(dma, nullptr, reinterpret_cast<aml_layout*>(back + off),
                                              reinterpret_cast<aml_layout*>(mid + off), aml_dma_ze_memcpy_op,
                                              reinterpret_cast<void*>(kChunk)) != AML_SUCCESS)
                    ++failures;
                if (i % 16 == 15 && aml_dma_barrier(dma) != AML_SUCCESS) ++failures;
            }
        });
    }
    for (auto& th : threads) th.join();
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(std::memcmp(src, back, kSize), 0);

    EXPECT_EQ(aml_area_munmap(host, src, kSize), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(host, back, kSize), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(device, mid, kSize), AML_SUCCESS);
    EXPECT_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS);
    aml_area_ze_destroy(&device);
    aml_area_ze_destroy(&host);
}

TEST(DmaThreads, SeveralThreadsWaitOnOneRequestWhileOthersSubmit) {
    hal::DeviceRef dev = zehal::aml::test::throttled_device(256u << 20);
    std::shared_ptr<Area> host, device;
    std::shared_ptr<Dma> dma;
    ASSERT_EQ(Area::create(dev, hal::MemoryKind::host, 0, 0, 64, &host), ZE_RESULT_SUCCESS);
    ASSERT_EQ(Area::create(dev, hal::MemoryKind::device, 0, 0, 64, &device), ZE_RESULT_SUCCESS);
    ASSERT_EQ(Dma::create(dev, 1, 0, &dma), ZE_RESULT_SUCCESS);
    constexpr size_t kSize = 4u << 20;
    void* src = nullptr;
    void* dst = nullptr;
    ASSERT_EQ(host->map(kSize, &src), ZE_RESULT_SUCCESS);
    ASSERT_EQ(device->map(kSize, &dst), ZE_RESULT_SUCCESS);
    std::shared_ptr<Request> shared_request;
    ASSERT_EQ(dma->copy(dst, src, kSize, &shared_request), ZE_RESULT_SUCCESS);

    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            if (t < 4) {
                if (shared_request->wait() != ZE_RESULT_SUCCESS || !shared_request->done()) ++failures;
                return;
            }
            for (int i = 0; i < 50; ++i) {
                std::shared_ptr<Request> r;
                auto* d = static_cast<char*>(dst) + (t * 50 + i) * 64;
                auto* s = static_cast<char*>(src) + (t * 50 + i) * 64;
                if (dma->copy(d, s, 64, i % 3 ? &r : nullptr) != ZE_RESULT_SUCCESS) ++failures;
                if (i % 10 == 0 && dma->barrier() != ZE_RESULT_SUCCESS) ++failures;
                if (r && i % 2 && r->cancel() != ZE_RESULT_SUCCESS) ++failures;
                if (r) r->flags();
            }
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(dma->barrier(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(dma->pending(), 0u);
}

TEST(AreaThreads, ConcurrentMapsAndUnmapsOfOneArea) {
    hal::DeviceRef dev = zehal::aml::test::sim_device();
    std::shared_ptr<Area> area;
    ASSERT_EQ(Area::create(dev, hal::MemoryKind::shared, 0, 0, 128, &area), ZE_RESULT_SUCCESS);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
        threads.emplace_back([&, t] {
            std::vector<void*> mine;
            for (int i = 0; i < 200; ++i) {
                void* p = nullptr;
                if (area->map(64 + i, &p) != ZE_RESULT_SUCCESS || reinterpret_cast<uintptr_t>(p) % 128) ++failures;
                std::memset(p, t, 64 + i);
                mine.push_back(p);
                if (i % 3 == 0) {
                    if (area->unmap(mine.back()) != ZE_RESULT_SUCCESS) ++failures;
                    if (area->unmap(mine.back()) != ZE_RESULT_ERROR_INVALID_ARGUMENT) ++failures;
                    mine.pop_back();
                }
            }
            for (void* p : mine)
                if (area->unmap(p) != ZE_RESULT_SUCCESS) ++failures;
        });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(failures.load(), 0);
    EXPECT_EQ(area->mapped_count(), 0u);
}

}  // namespace
