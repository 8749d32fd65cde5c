// DMA engines through the C API: round trips across every pair of memory kinds, both
// operators, fire-and-forget and barriers, requests (flags, wait, cancel), every error case
// with its code, a lost device, and the default engine.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "aml.h"
#include "aml/area/ze.h"
#include "aml/dma/ze.h"
#include "aml/layout/dense.h"
#include "aml_test_util.hpp"

namespace {

using zehal::aml::test::handle;
using zehal::aml::test::pattern;
namespace hal = zehal::hal;

// The flags word of a request handle, read atomically (the engine updates it).
int flags_of(aml_dma_request* req) {
    return __atomic_load_n(&reinterpret_cast<aml_dma_ze_request*>(req)->flags, __ATOMIC_ACQUIRE);
}

// A device with one area of each kind and an engine on copy engine 0.
class DmaTest : public ::testing::Test {
protected:
    void SetUp() override { SetUpWith(zehal::aml::test::sim_device()); }

    void SetUpWith(hal::DeviceRef device) {
        TearDown();
        dev = std::move(device);
        ASSERT_EQ(aml_area_ze_device_create(&device_area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS),
                  AML_SUCCESS);
        ASSERT_EQ(aml_area_ze_device_create(&shared_area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_SHARED_FLAGS),
                  AML_SUCCESS);
        ASSERT_EQ(aml_area_ze_host_create(&host_area, 0, 64), AML_SUCCESS);
        ASSERT_EQ(aml_dma_ze_create(&dma, handle(dev), 1, 0), AML_SUCCESS);
    }

    void TearDown() override {
        if (dma) {
            EXPECT_GE(aml_dma_ze_destroy(&dma), -AML_FAILURE);
        }
        for (auto& [area, ptr, size] : maps) aml_area_munmap(area, ptr, size);
        maps.clear();
        aml_area_ze_destroy(&device_area);
        aml_area_ze_destroy(&shared_area);
        aml_area_ze_destroy(&host_area);
    }

    // `size` bytes of `area`, unmapped at tear-down.
    unsigned char* map(aml_area* area, size_t size) {
        void* p = aml_area_mmap(area, size, nullptr);
        EXPECT_NE(p, nullptr) << aml_strerror(aml_errno);
        maps.push_back({area, p, size});
        return static_cast<unsigned char*>(p);
    }

    // Synchronous memcpy_op copy.
    int copy(void* dst, const void* src, size_t size) {
        return aml_dma_copy_custom(dma, static_cast<aml_layout*>(dst),
                                   const_cast<aml_layout*>(static_cast<const aml_layout*>(src)), aml_dma_ze_memcpy_op,
                                   reinterpret_cast<void*>(size));
    }

    // Contents of `size` bytes at `p` of any kind, read through a host buffer.
    std::vector<unsigned char> read(const void* p, size_t size) {
        unsigned char* staging = map(host_area, size);
        EXPECT_EQ(copy(staging, p, size), AML_SUCCESS);
        return {staging, staging + size};
    }

    // Writes `bytes` at `p` of any kind through a host buffer.
    void write(void* p, const std::vector<unsigned char>& bytes) {
        unsigned char* staging = map(host_area, bytes.size());
        std::memcpy(staging, bytes.data(), bytes.size());
        EXPECT_EQ(copy(p, staging, bytes.size()), AML_SUCCESS);
    }

    hal::DeviceRef dev;
    aml_area* device_area = nullptr;
    aml_area* shared_area = nullptr;
    aml_area* host_area = nullptr;
    aml_dma* dma = nullptr;
    struct Mapping {
        aml_area* area;
        void* ptr;
        size_t size;
    };
    std::vector<Mapping> maps;
};

// A 1-D dense layout of `n` bytes at `p`.
struct Bytes1D {
    aml_layout* layout = nullptr;
    Bytes1D(void* p, size_t n, size_t element_size = 1) {
        const size_t dims[1] = {n / element_size};
        EXPECT_EQ(aml_layout_dense_create(&layout, p, AML_LAYOUT_ORDER_C, element_size, 1, dims, nullptr, nullptr),
                  AML_SUCCESS);
    }
    ~Bytes1D() { aml_layout_destroy(&layout); }
};

TEST_F(DmaTest, RoundTripsAcrossEveryPairOfKinds) {
    constexpr size_t kSize = 64 * 1024 + 8;
    aml_area* kinds[3] = {host_area, device_area, shared_area};
    const char* names[3] = {"host", "device", "shared"};
    unsigned seed = 1;
    for (int from = 0; from < 3; ++from) {
        for (int to = 0; to < 3; ++to) {
            for (bool with_layouts : {true, false}) {
                SCOPED_TRACE(std::string(names[from]) + " -> " + names[to] +
                             (with_layouts ? " copy_1D" : " memcpy_op"));
                unsigned char* src = map(kinds[from], kSize);
                unsigned char* dst = map(kinds[to], kSize);
                const std::vector<unsigned char> data = pattern(kSize, seed++);
                write(src, data);
                write(dst, std::vector<unsigned char>(kSize, 0));
                if (with_layouts) {
                    Bytes1D d(dst, kSize, 8), s(src, kSize, 8);
                    ASSERT_EQ(aml_dma_copy(dma, d.layout, s.layout), AML_SUCCESS);
                } else {
                    ASSERT_EQ(copy(dst, src, kSize), AML_SUCCESS);
                }
                EXPECT_EQ(read(dst, kSize), data);
            }
        }
    }
}

TEST_F(DmaTest, MemcpyOpRoundTripOfOneMiB) {
    constexpr size_t kSize = 1u << 20;
    unsigned char* host = map(host_area, kSize);
    unsigned char* device = map(device_area, kSize);
    unsigned char* back = map(host_area, kSize);
    const std::vector<unsigned char> data = pattern(kSize, 42);
    std::memcpy(host, data.data(), kSize);
    std::memset(back, 0, kSize);
    ASSERT_EQ(copy(device, host, kSize), AML_SUCCESS);
    ASSERT_EQ(copy(back, device, kSize), AML_SUCCESS);
    EXPECT_EQ(std::memcmp(back, data.data(), kSize), 0);
}

// A peer device's areas (docs/devices.md): this device's engine copies its device memory to
// the peer's device and shared memory and back, and an engine of the peer copies the other
// way. A lost peer's memory fails the copy (DEVICE_LOST: -AML_FAILURE).
TEST_F(DmaTest, CopiesBetweenTwoDevicesAreasOnEitherDevicesEngine) {
    constexpr size_t kSize = 1u << 16;
    hal::DeviceRef peer = zehal::aml::test::sim_device();
    aml_area* peer_device = nullptr;
    aml_area* peer_shared = nullptr;
    ASSERT_EQ(aml_area_ze_device_create(&peer_device, handle(peer), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS),
              AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_device_create(&peer_shared, handle(peer), 0, 0, 64, AML_AREA_ZE_MMAP_SHARED_FLAGS),
              AML_SUCCESS);
    aml_dma* peer_dma = nullptr;
    ASSERT_EQ(aml_dma_ze_create(&peer_dma, handle(peer), 1, 0), AML_SUCCESS);
    const std::vector<unsigned char> data = pattern(kSize, 9);
    unsigned char* host = map(host_area, kSize);
    unsigned char* mine = map(device_area, kSize);
    unsigned char* theirs = map(peer_device, kSize);
    unsigned char* theirs_shared = map(peer_shared, kSize);
    std::memcpy(host, data.data(), kSize);
    ASSERT_EQ(copy(mine, host, kSize), AML_SUCCESS);
    ASSERT_EQ(copy(theirs, mine, kSize), AML_SUCCESS);  // this device's engine, to the peer
    ASSERT_EQ(aml_dma_copy_custom(peer_dma, reinterpret_cast<aml_layout*>(theirs_shared),
                                  reinterpret_cast<aml_layout*>(theirs), aml_dma_ze_memcpy_op,
                                  reinterpret_cast<void*>(kSize)),
              AML_SUCCESS);
    unsigned char* zeros = map(host_area, kSize);
    std::memset(zeros, 0, kSize);
    ASSERT_EQ(copy(mine, zeros, kSize), AML_SUCCESS);
    ASSERT_EQ(copy(mine, theirs_shared, kSize), AML_SUCCESS);  // and back
    EXPECT_EQ(read(mine, kSize), data);
    EXPECT_EQ(read(theirs, kSize), data);
    ASSERT_EQ(peer->lose(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(copy(mine, theirs, kSize), -AML_FAILURE);
    EXPECT_EQ(copy(host, mine, kSize), AML_SUCCESS);  // this device is still well
    EXPECT_GE(aml_dma_ze_destroy(&peer_dma), -AML_FAILURE);
    for (auto it = maps.begin(); it != maps.end();) {
        if (it->area == peer_device || it->area == peer_shared) {
            aml_area_munmap(it->area, it->ptr, it->size);
            it = maps.erase(it);
        } else {
            ++it;
        }
    }
    aml_area_ze_destroy(&peer_device);
    aml_area_ze_destroy(&peer_shared);
}

// As AML's own test: 128 fire-and-forget copies of 1 KiB, one barrier, every byte checked;
// with each operator.
TEST_F(DmaTest, FireAndForgetCopiesThenBarrier) {
    constexpr size_t kChunk = 1024, kCount = 128, kSize = kChunk * kCount;
    for (bool with_layouts : {false, true}) {
        SCOPED_TRACE(with_layouts ? "copy_1D" : "memcpy_op");
        unsigned char* host = map(host_area, kSize);
        unsigned char* device = map(device_area, kSize);
        unsigned char* back = map(host_area, kSize);
        const std::vector<unsigned char> data = pattern(kSize, with_layouts ? 7 : 8);
        std::memcpy(host, data.data(), kSize);
        std::memset(back, 0, kSize);
        for (size_t i = 0; i < kCount; ++i) {
            const size_t off = i * kChunk;
            if (with_layouts) {
                Bytes1D d(device + off, kChunk), s(host + off, kChunk);
                ASSERT_EQ(aml_dma_async_copy(dma, nullptr, d.layout, s.layout), AML_SUCCESS);
            } else {
                ASSERT_EQ(aml_dma_async_copy_custom(dma, nullptr, reinterpret_cast<aml_layout*>(device + off),
                                                    reinterpret_cast<aml_layout*>(host + off), aml_dma_ze_memcpy_op,
                                                    reinterpret_cast<void*>(kChunk)),
                          AML_SUCCESS);
            }
        }
        ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
        for (size_t i = 0; i < kCount; ++i) {
            const size_t off = i * kChunk;
            ASSERT_EQ(aml_dma_async_copy_custom(dma, nullptr, reinterpret_cast<aml_layout*>(back + off),
                                                reinterpret_cast<aml_layout*>(device + off), aml_dma_ze_memcpy_op,
                                                reinterpret_cast<void*>(kChunk)),
                      AML_SUCCESS);
        }
        ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
        EXPECT_EQ(std::memcmp(back, data.data(), kSize), 0);
    }
}

TEST_F(DmaTest, BarrierThenWaitReturnsAtOnce) {
    constexpr size_t kSize = 4096, kCount = 16;
    unsigned char* host = map(host_area, kSize * kCount);
    unsigned char* device = map(device_area, kSize * kCount);
    std::memset(host, 0x3C, kSize * kCount);
    std::vector<aml_dma_request*> reqs(kCount, nullptr);
    for (size_t i = 0; i < kCount; ++i)
        ASSERT_EQ(aml_dma_async_copy_custom(dma, &reqs[i], reinterpret_cast<aml_layout*>(device + i * kSize),
                                            reinterpret_cast<aml_layout*>(host + i * kSize), aml_dma_ze_memcpy_op,
                                            reinterpret_cast<void*>(kSize)),
                  AML_SUCCESS);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    for (aml_dma_request*& r : reqs) {
        ASSERT_NE(r, nullptr);
        EXPECT_EQ(flags_of(r), AML_DMA_ZE_REQUEST_FLAGS_DONE);
        EXPECT_EQ(aml_dma_wait(dma, &r), AML_SUCCESS);
        EXPECT_EQ(r, nullptr);
    }
    EXPECT_EQ(read(device, kSize * kCount), std::vector<unsigned char>(kSize * kCount, 0x3C));
}

TEST_F(DmaTest, RequestFlagsGoFromPendingToDone) {
    SetUpWith(zehal::aml::test::throttled_device(32u << 20));  // 32 MiB/s: 2 MiB takes ~60 ms
    constexpr size_t kBig = 2u << 20;
    unsigned char* host = map(host_area, kBig);
    unsigned char* device = map(device_area, kBig);
    std::memset(host, 0x11, kBig);
    aml_dma_request* big = nullptr;
    aml_dma_request* small = nullptr;
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &big, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(kBig - 64)),
              AML_SUCCESS);
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &small, reinterpret_cast<aml_layout*>(device + kBig - 64),
                                        reinterpret_cast<aml_layout*>(host + kBig - 64), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(64)),
              AML_SUCCESS);
    // The small copy is queued behind the big one: it cannot have completed yet.
    EXPECT_EQ(flags_of(small), AML_DMA_ZE_REQUEST_FLAGS_PENDING);
    // The flags word becomes DONE by itself, with no call on the engine.
    while (flags_of(small) != AML_DMA_ZE_REQUEST_FLAGS_DONE) std::this_thread::yield();
    EXPECT_EQ(flags_of(big), AML_DMA_ZE_REQUEST_FLAGS_DONE);  // completes first (in order)
    EXPECT_EQ(aml_dma_wait(dma, &big), AML_SUCCESS);
    EXPECT_EQ(aml_dma_wait(dma, &small), AML_SUCCESS);

    // After a barrier, too.
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &big, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(kBig)),
              AML_SUCCESS);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    EXPECT_EQ(flags_of(big), AML_DMA_ZE_REQUEST_FLAGS_DONE);
    EXPECT_EQ(aml_dma_wait(dma, &big), AML_SUCCESS);
}

TEST_F(DmaTest, CancelRemovesAQueuedRequestAndWaitsForAnInFlightOne) {
    SetUpWith(zehal::aml::test::throttled_device(32u << 20));
    constexpr size_t kBig = 2u << 20, kSmall = 4096;
    unsigned char* host = map(host_area, kBig + kSmall);
    unsigned char* device = map(device_area, kBig + kSmall);
    write(device, std::vector<unsigned char>(kBig + kSmall, 0));
    std::memset(host, 0x77, kBig + kSmall);
    aml_dma_request* first = nullptr;
    aml_dma_request* queued = nullptr;
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &first, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(kBig)),
              AML_SUCCESS);
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &queued, reinterpret_cast<aml_layout*>(device + kBig),
                                        reinterpret_cast<aml_layout*>(host + kBig), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(kSmall)),
              AML_SUCCESS);
    // Behind ~60 ms of copy, the second request has not started: cancel removes it.
    EXPECT_EQ(aml_dma_cancel(dma, &queued), AML_SUCCESS);
    EXPECT_EQ(queued, nullptr);
    // The first one is running (or about to): cancel takes it back or waits for it.
    EXPECT_EQ(aml_dma_cancel(dma, &first), AML_SUCCESS);
    EXPECT_EQ(first, nullptr);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    const std::vector<unsigned char> after = read(device, kBig + kSmall);
    // The cancelled copy never ran.
    EXPECT_EQ(std::vector<unsigned char>(after.begin() + kBig, after.end()), std::vector<unsigned char>(kSmall, 0));
    // The other either ran whole or not at all.
    const bool ran = after[0] == 0x77;
    EXPECT_EQ(std::vector<unsigned char>(after.begin(), after.begin() + kBig),
              std::vector<unsigned char>(kBig, ran ? 0x77 : 0));
    // The engine is usable afterwards.
    std::memset(host, 0x12, kSmall);
    ASSERT_EQ(copy(device, host, kSmall), AML_SUCCESS);
    EXPECT_EQ(read(device, kSmall), std::vector<unsigned char>(kSmall, 0x12));
}

TEST_F(DmaTest, CancelOfADoneRequestJustFreesIt) {
    unsigned char* host = map(host_area, 256);
    unsigned char* device = map(device_area, 256);
    aml_dma_request* r = nullptr;
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &r, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(256)),
              AML_SUCCESS);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    EXPECT_EQ(aml_dma_cancel(dma, &r), AML_SUCCESS);
    EXPECT_EQ(r, nullptr);
}

TEST_F(DmaTest, CreateAndDestroyRejectBadArguments) {
    aml_dma* d = nullptr;
    const hal::DeviceProperties& p = dev->properties();
    EXPECT_EQ(aml_dma_ze_create(nullptr, handle(dev), 1, 0), -AML_EINVAL);
    EXPECT_EQ(aml_dma_ze_create(&d, nullptr, 1, 0), -AML_EINVAL);
    EXPECT_EQ(aml_dma_ze_create(&d, handle(dev), 2, 0), -AML_EINVAL);
    EXPECT_EQ(aml_dma_ze_create(&d, handle(dev), 1, p.copy_engines), -AML_EINVAL);
    EXPECT_EQ(aml_dma_ze_create(&d, handle(dev), 0, p.compute_engines), -AML_EINVAL);
    EXPECT_EQ(d, nullptr);
    ASSERT_EQ(aml_dma_ze_create(&d, handle(dev), 0, 0), AML_SUCCESS);  // a compute engine works too
    EXPECT_EQ(aml_dma_ze_destroy(&d), AML_SUCCESS);
    EXPECT_EQ(d, nullptr);
    EXPECT_EQ(aml_dma_ze_destroy(&d), AML_SUCCESS);
    EXPECT_EQ(aml_dma_ze_destroy(nullptr), -AML_EINVAL);
}

TEST_F(DmaTest, EveryErrorCaseHasItsCode) {
    unsigned char* host = map(host_area, 4096);
    unsigned char* device = map(device_area, 4096);
    Bytes1D d(device, 4096), s(host, 4096), small(device, 1024), small_src(host, 1024);
    aml_dma_request* r = nullptr;

    // Null engine, layouts, requests.
    EXPECT_EQ(aml_dma_copy(nullptr, d.layout, s.layout), -AML_EINVAL);
    EXPECT_EQ(aml_dma_copy(dma, nullptr, s.layout), -AML_EINVAL);
    EXPECT_EQ(aml_dma_copy(dma, d.layout, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_dma_async_copy(nullptr, &r, d.layout, s.layout), -AML_EINVAL);
    EXPECT_EQ(aml_dma_async_copy(dma, &r, nullptr, s.layout), -AML_EINVAL);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(aml_dma_wait(nullptr, &r), -AML_EINVAL);
    EXPECT_EQ(aml_dma_wait(dma, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_dma_wait(dma, &r), -AML_EINVAL);  // *req NULL
    EXPECT_EQ(aml_dma_cancel(dma, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_dma_cancel(dma, &r), -AML_EINVAL);
    EXPECT_EQ(aml_dma_barrier(nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_dma_fprintf(nullptr, "", dma), -AML_EINVAL);
    EXPECT_EQ(aml_dma_fprintf(stdout, "", nullptr), -AML_EINVAL);

    // copy_1D: not 1-D, not unit stride, destination smaller, not a dense layout.
    const size_t dims2[2] = {64, 64};
    aml_layout* two_d = nullptr;
    ASSERT_EQ(aml_layout_dense_create(&two_d, host, AML_LAYOUT_ORDER_C, 1, 2, dims2, nullptr, nullptr), AML_SUCCESS);
    EXPECT_EQ(aml_dma_copy(dma, d.layout, two_d), -AML_EINVAL);
    EXPECT_EQ(aml_dma_copy(dma, two_d, s.layout), -AML_EINVAL);
    aml_layout_destroy(&two_d);
    const size_t n[1] = {1024};
    const size_t stride[1] = {2};
    aml_layout* strided = nullptr;
    ASSERT_EQ(aml_layout_dense_create(&strided, host, AML_LAYOUT_ORDER_C, 1, 1, n, stride, nullptr), AML_SUCCESS);
    EXPECT_EQ(aml_dma_copy(dma, d.layout, strided), -AML_EINVAL);
    aml_layout_destroy(&strided);
    EXPECT_EQ(aml_dma_copy(dma, small.layout, s.layout), -AML_EINVAL);
    aml_layout_ops no_ops{};
    aml_layout foreign{&no_ops, nullptr};
    EXPECT_EQ(aml_dma_copy(dma, &foreign, s.layout), -AML_EINVAL);
    EXPECT_EQ(aml_dma_async_copy(dma, &r, d.layout, small_src.layout), AML_SUCCESS);  // a smaller source is fine
    EXPECT_EQ(aml_dma_wait(dma, &r), AML_SUCCESS);

    // Overlapping source and destination: EDOM, with either operator.
    Bytes1D lo(host, 2048), hi(host + 1024, 2048);
    EXPECT_EQ(aml_dma_copy(dma, hi.layout, lo.layout), -AML_EDOM);
    EXPECT_EQ(copy(host + 1, host, 100), -AML_EDOM);
    EXPECT_EQ(copy(host, host, 100), -AML_EDOM);

    // memcpy_op: zero bytes, null pointers, pages not mapped, past the end.
    EXPECT_EQ(copy(device, host, 0), -AML_EINVAL);
    EXPECT_EQ(aml_dma_ze_memcpy_op(reinterpret_cast<aml_layout*>(device), reinterpret_cast<aml_layout*>(host), nullptr),
              -AML_EINVAL);  // no argument block
    EXPECT_EQ(aml_dma_ze_copy_1D(d.layout, s.layout, nullptr), -AML_EINVAL);
    EXPECT_EQ(copy(device, reinterpret_cast<unsigned char*>(uintptr_t{4096}), 256), -AML_EINVAL);
    EXPECT_EQ(copy(device, host, 8192), -AML_EINVAL);

    // The engine still works after all of that.
    std::memset(host, 0x5E, 4096);
    ASSERT_EQ(aml_dma_copy(dma, d.layout, s.layout), AML_SUCCESS);
    EXPECT_EQ(read(device, 4096), std::vector<unsigned char>(4096, 0x5E));
}

TEST_F(DmaTest, RequestsOfAnotherEngineAndStaleHandlesAreRefused) {
    aml_dma* other = nullptr;
    ASSERT_EQ(aml_dma_ze_create(&other, handle(dev), 1, 1), AML_SUCCESS);
    unsigned char* host = map(host_area, 64);
    unsigned char* device = map(device_area, 64);
    aml_dma_request* r = nullptr;
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &r, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(64)),
              AML_SUCCESS);
    aml_dma_request* same = r;
    EXPECT_EQ(aml_dma_wait(other, &same), -AML_EINVAL);
    EXPECT_EQ(aml_dma_cancel(other, &same), -AML_EINVAL);
    EXPECT_EQ(same, r);  // untouched
    EXPECT_EQ(aml_dma_wait(dma, &r), AML_SUCCESS);
    EXPECT_EQ(aml_dma_wait(dma, &same), -AML_EINVAL);  // already waited for (freed)
    EXPECT_EQ(aml_dma_cancel(dma, &same), -AML_EINVAL);
    EXPECT_EQ(aml_dma_ze_destroy(&other), AML_SUCCESS);
}

// Operators: one wrapping copy_1D, one that moves data itself and submits nothing, one
// that fails.
int counted_calls = 0;
int counting_op(aml_layout* dst, const aml_layout* src, void* arg) {
    ++counted_calls;
    EXPECT_EQ(static_cast<aml_dma_ze_copy_args*>(arg)->arg, &counted_calls);
    return aml_dma_ze_copy_1D(dst, src, arg);
}
int host_memcpy_op(aml_layout* dst, const aml_layout* src, void* arg) {
    std::memcpy(aml_layout_rawptr(dst), aml_layout_rawptr(src),
                reinterpret_cast<uintptr_t>(static_cast<aml_dma_ze_copy_args*>(arg)->arg));
    return AML_SUCCESS;
}
int failing_op(aml_layout*, const aml_layout*, void*) { return -AML_ENOTSUP; }
int copy_twice_op(aml_layout* dst, const aml_layout* src, void* arg) {
    const int first = aml_dma_ze_copy_1D(dst, src, arg);
    EXPECT_EQ(first, AML_SUCCESS);
    return aml_dma_ze_copy_1D(dst, src, arg);  // a request carries one copy
}

TEST_F(DmaTest, CustomOperators) {
    unsigned char* host = map(host_area, 512);
    unsigned char* shared = map(shared_area, 512);
    Bytes1D d(shared, 512), s(host, 512);
    std::memset(host, 0x42, 512);
    counted_calls = 0;
    ASSERT_EQ(aml_dma_copy_custom(dma, d.layout, s.layout, counting_op, &counted_calls), AML_SUCCESS);
    EXPECT_EQ(counted_calls, 1);
    EXPECT_EQ(shared[511], 0x42);

    std::memset(host, 0x43, 512);
    aml_dma_request* r = nullptr;
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &r, d.layout, s.layout, host_memcpy_op, reinterpret_cast<void*>(512)),
              AML_SUCCESS);
    EXPECT_EQ(flags_of(r), AML_DMA_ZE_REQUEST_FLAGS_DONE);  // nothing submitted: done at once
    EXPECT_EQ(aml_dma_wait(dma, &r), AML_SUCCESS);
    EXPECT_EQ(shared[0], 0x43);

    r = reinterpret_cast<aml_dma_request*>(&r);  // a sentinel: must stay untouched
    aml_dma_request* const sentinel = r;
    EXPECT_EQ(aml_dma_async_copy_custom(dma, &r, d.layout, s.layout, failing_op, nullptr), -AML_ENOTSUP);
    EXPECT_EQ(r, sentinel);
    EXPECT_EQ(aml_dma_async_copy_custom(dma, nullptr, d.layout, s.layout, failing_op, nullptr), -AML_ENOTSUP);
    r = nullptr;
    EXPECT_EQ(aml_dma_async_copy_custom(dma, &r, d.layout, s.layout, copy_twice_op, nullptr), -AML_EINVAL);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
}

TEST_F(DmaTest, LostDeviceIsFailure) {
    // 64 bytes at 1 KiB/s: the copy is pending (its data moved at once, its completion
    // ~60 ms later) when the device is lost.
    SetUpWith(zehal::aml::test::throttled_device(1024));
    constexpr size_t kSize = 64;
    unsigned char* host = map(host_area, kSize);
    unsigned char* device = map(device_area, kSize);
    aml_dma_request* r = nullptr;
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &r, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(kSize)),
              AML_SUCCESS);
    ASSERT_EQ(dev->lose(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(aml_dma_wait(dma, &r), -AML_FAILURE);
    EXPECT_EQ(r, nullptr);
    EXPECT_EQ(copy(device, host, 64), -AML_FAILURE);
    EXPECT_EQ(aml_dma_async_copy_custom(dma, nullptr, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(64)),
              -AML_FAILURE);
    EXPECT_EQ(aml_dma_barrier(dma), -AML_FAILURE);
    EXPECT_EQ(aml_dma_ze_destroy(&dma), -AML_FAILURE);
    EXPECT_EQ(dma, nullptr);
    aml_dma* d = nullptr;
    EXPECT_EQ(aml_dma_ze_create(&d, handle(dev), 1, 0), -AML_FAILURE);
}

TEST_F(DmaTest, DestroyWaitsAndFreesHeldRequests) {
    constexpr size_t kSize = 1u << 16;
    unsigned char* host = map(host_area, kSize);
    unsigned char* device = map(device_area, kSize);
    std::memset(host, 0x99, kSize);
    aml_dma_request* held = nullptr;
    ASSERT_EQ(aml_dma_async_copy_custom(dma, &held, reinterpret_cast<aml_layout*>(device),
                                        reinterpret_cast<aml_layout*>(host), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(kSize)),
              AML_SUCCESS);
    ASSERT_EQ(aml_dma_async_copy_custom(dma, nullptr, reinterpret_cast<aml_layout*>(host),
                                        reinterpret_cast<aml_layout*>(device), aml_dma_ze_memcpy_op,
                                        reinterpret_cast<void*>(kSize)),
              AML_SUCCESS);
    // Destroyed with a request never waited for: the leak sanitizer checks it is freed.
    EXPECT_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS);
    EXPECT_EQ(dma, nullptr);
    ASSERT_EQ(aml_dma_ze_create(&dma, handle(dev), 1, 0), AML_SUCCESS);
    EXPECT_EQ(read(device, kSize), std::vector<unsigned char>(kSize, 0x99));
}

TEST_F(DmaTest, FprintfDescribesTheEngine) {
    char text[512] = {0};
    FILE* f = fmemopen(text, sizeof text - 1, "w");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(aml_dma_fprintf(f, "# ", dma), AML_SUCCESS);
    std::fclose(f);
    EXPECT_NE(std::strstr(text, "# dma: ze"), nullptr);
    EXPECT_NE(std::strstr(text, "# ordinal: 1"), nullptr);
    EXPECT_NE(std::strstr(text, "# index: 0"), nullptr);
}

TEST(DmaDefault, CopiesBetweenTheDefaultAreas) {
    ASSERT_EQ(aml_init(nullptr, nullptr), AML_SUCCESS);
    aml_dma* dma = aml_dma_ze_default;
    ASSERT_NE(dma, nullptr);
    EXPECT_EQ(dma->ops, &aml_dma_ze_ops);
    constexpr size_t kSize = 8192;
    auto* host = static_cast<unsigned char*>(aml_area_mmap(aml_area_ze_host, kSize, nullptr));
    void* device = aml_area_mmap(aml_area_ze_device, kSize, nullptr);
    auto* back = static_cast<unsigned char*>(aml_area_mmap(aml_area_ze_host, kSize, nullptr));
    ASSERT_TRUE(host && device && back);
    const std::vector<unsigned char> data = pattern(kSize, 3);
    std::memcpy(host, data.data(), kSize);
    Bytes1D d(device, kSize), s(host, kSize), b(back, kSize);
    ASSERT_EQ(aml_dma_copy(dma, d.layout, s.layout), AML_SUCCESS);
    ASSERT_EQ(aml_dma_copy(dma, b.layout, d.layout), AML_SUCCESS);
    EXPECT_EQ(std::memcmp(back, data.data(), kSize), 0);
    EXPECT_EQ(aml_area_munmap(aml_area_ze_host, host, kSize), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(aml_area_ze_host, back, kSize), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(aml_area_ze_device, device, kSize), AML_SUCCESS);
    EXPECT_EQ(aml_finalize(), AML_SUCCESS);
}

}  // namespace
