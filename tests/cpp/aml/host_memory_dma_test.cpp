// Host memory is host memory (contract §2.2) through the AML C API and the C++ classes:
// host buffers of any area of any backend are copied on any engine; device memory stays
// tied to its device. The CUDA cases run where the cuda backend has a device (skipped
// elsewhere with the backend's reason).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "aml.h"
#include "aml/area.hpp"
#include "aml/area/ze.h"
#include "aml/dma.hpp"
#include "aml/dma/ze.h"
#include "aml/request.hpp"
#include "aml_test_util.hpp"
#include "hal/host_memory.hpp"
#include "hal/registry.hpp"

namespace {

namespace hal = zehal::hal;
namespace zaml = zehal::aml;
using zehal::aml::test::handle;
using zehal::aml::test::pattern;

// One mapping of an area, unmapped when it goes.
struct Mapping {
    Mapping(std::shared_ptr<zaml::Area> a, size_t size) : area(std::move(a)) {
        EXPECT_EQ(area->map(size, &ptr), ZE_RESULT_SUCCESS);
    }
    ~Mapping() {
        if (ptr) {
            EXPECT_EQ(area->unmap(ptr), ZE_RESULT_SUCCESS);
        }
    }
    Mapping(const Mapping&) = delete;
    Mapping& operator=(const Mapping&) = delete;
    unsigned char* get() const { return static_cast<unsigned char*>(ptr); }

    std::shared_ptr<zaml::Area> area;
    void* ptr = nullptr;
};

std::shared_ptr<zaml::Area> area(const hal::DeviceRef& d, hal::MemoryKind kind) {
    std::shared_ptr<zaml::Area> a;
    EXPECT_EQ(zaml::Area::create(d, kind, 0, 0, 64, &a), ZE_RESULT_SUCCESS);
    return a;
}

std::shared_ptr<zaml::Dma> engine(const hal::DeviceRef& d) {
    const uint32_t ordinal = d->properties().copy_engines > 0 ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    std::shared_ptr<zaml::Dma> dma;
    EXPECT_EQ(zaml::Dma::create(d, ordinal, 0, &dma), ZE_RESULT_SUCCESS);
    return dma;
}

// Copies on `dma` with a request and waits for it: the copy's result.
ze_result_t copy(zaml::Dma& dma, void* dst, const void* src, size_t size) {
    std::shared_ptr<zaml::Request> request;
    if (ze_result_t r = dma.copy(dst, src, size, &request); r != ZE_RESULT_SUCCESS) return r;
    return request->wait();
}

// Host memory on a round trip through `dev`'s device memory on `dma`: host → device → host.
void round_trip(zaml::Dma& dma, const hal::DeviceRef& dev, unsigned char* from, unsigned char* to, size_t size,
                unsigned seed) {
    const std::vector<unsigned char> bytes = pattern(size, seed);
    std::memcpy(from, bytes.data(), size);
    std::memset(to, 0, size);
    Mapping device(area(dev, hal::MemoryKind::device), size);
    ASSERT_EQ(copy(dma, device.ptr, from, size), ZE_RESULT_SUCCESS);
    ASSERT_EQ(copy(dma, to, device.ptr, size), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::vector<unsigned char>(to, to + size), bytes);
}

// The first CUDA device, or null with *why.
hal::DeviceRef cuda_device(std::string* why) {
    std::shared_ptr<hal::Backend> cuda;
    if (hal::find_backend("cuda", &cuda) != ZE_RESULT_SUCCESS) {
        for (const hal::BackendStatus& s : hal::backends())
            if (s.name == "cuda") *why = "cuda backend unavailable: " + s.reason;
        return nullptr;
    }
    if (cuda->devices().empty()) {
        *why = "cuda backend has no device";
        return nullptr;
    }
    return cuda->devices().front();
}

TEST(HostMemoryDma, CApiCopiesHostAndDeviceMemoryOfAnotherDevice) {
    const hal::DeviceRef a = zehal::aml::test::sim_device();
    const hal::DeviceRef b = zehal::aml::test::sim_device();
    aml_area* host_of_a = nullptr;
    aml_area* device_of_a = nullptr;
    aml_area* device_of_b = nullptr;
    ASSERT_EQ(aml_area_ze_device_create(&device_of_a, handle(a), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_device_create(&device_of_b, handle(b), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_host_create(&host_of_a, 0, 64), AML_SUCCESS);  // the default backend's (sim)
    aml_dma* dma = nullptr;
    ASSERT_EQ(aml_dma_ze_create(&dma, handle(b), 1, 0), AML_SUCCESS);
    auto* host = static_cast<unsigned char*>(aml_area_mmap(host_of_a, 4096, nullptr));
    void* dev_a = aml_area_mmap(device_of_a, 4096, nullptr);
    void* dev_b = aml_area_mmap(device_of_b, 4096, nullptr);
    ASSERT_TRUE(host && dev_a && dev_b);

    const std::vector<unsigned char> bytes = pattern(4096, 3);
    std::memcpy(host, bytes.data(), 4096);
    aml_dma_request* req = nullptr;
    ASSERT_EQ(aml_dma_ze_copy_signal(dma, &req, dev_b, host, 4096, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_wait(dma, &req), AML_SUCCESS);
    std::memset(host, 0, 4096);
    ASSERT_EQ(aml_dma_copy_custom(dma, static_cast<aml_layout*>(static_cast<void*>(host)),
                                  static_cast<aml_layout*>(dev_b), aml_dma_ze_memcpy_op, reinterpret_cast<void*>(4096)),
              AML_SUCCESS);
    EXPECT_EQ(std::vector<unsigned char>(host, host + 4096), bytes);

    // Device memory of a on b's engine, as source or destination: two sim devices are peers
    // (docs/devices.md), so both copy.
    ASSERT_EQ(aml_dma_ze_copy_signal(dma, &req, dev_b, dev_a, 64, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_wait(dma, &req), AML_SUCCESS);
    EXPECT_EQ(aml_dma_ze_copy_signal(dma, nullptr, dev_a, host, 64, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    EXPECT_EQ(std::memcmp(dev_a, host, 64), 0);

    EXPECT_EQ(aml_area_munmap(host_of_a, host, 4096), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(device_of_a, dev_a, 4096), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(device_of_b, dev_b, 4096), AML_SUCCESS);
    EXPECT_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS);
    aml_area_ze_destroy(&host_of_a);
    aml_area_ze_destroy(&device_of_a);
    aml_area_ze_destroy(&device_of_b);
}

TEST(HostMemoryDma, CApiCopiesHostMemoryOfAnotherBackend) {
    // Host memory as another backend keeps it: its own registry, entered in the index.
    hal::HostMemoryRegistry other("other");
    void* theirs = nullptr;
    ASSERT_EQ(posix_memalign(&theirs, 64, 8192), 0);
    hal::Allocation a;
    a.info.kind = hal::MemoryKind::host;
    a.info.base = theirs;
    a.info.size = 8192;
    ASSERT_EQ(other.insert(a), ZE_RESULT_SUCCESS);

    const hal::DeviceRef d = zehal::aml::test::sim_device();
    aml_area* device_area = nullptr;
    ASSERT_EQ(aml_area_ze_device_create(&device_area, handle(d), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    aml_dma* dma = nullptr;
    ASSERT_EQ(aml_dma_ze_create(&dma, handle(d), 0, 0), AML_SUCCESS);  // a compute engine
    void* dev = aml_area_mmap(device_area, 8192, nullptr);
    ASSERT_NE(dev, nullptr);
    const std::vector<unsigned char> bytes = pattern(8192, 9);
    std::memcpy(theirs, bytes.data(), 8192);
    aml_dma_request* req = nullptr;
    ASSERT_EQ(aml_dma_ze_copy_signal(dma, &req, dev, theirs, 8192, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_wait(dma, &req), AML_SUCCESS);
    std::memset(theirs, 0, 8192);
    ASSERT_EQ(aml_dma_ze_copy_signal(dma, nullptr, theirs, dev, 8192, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    EXPECT_EQ(std::memcmp(theirs, bytes.data(), 8192), 0);
    EXPECT_EQ(aml_dma_ze_copy_signal(dma, nullptr, dev, theirs, 8193, nullptr), -AML_EINVAL);  // past its end

    // Taken out of its backend's registry while still alive: system memory, copied too
    // (its bounds are then the caller's).
    ASSERT_TRUE(other.remove(theirs, nullptr));
    EXPECT_EQ(aml_dma_ze_copy_signal(dma, nullptr, dev, theirs, 64, nullptr), AML_SUCCESS);
    ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    std::free(theirs);
    EXPECT_EQ(aml_area_munmap(device_area, dev, 8192), AML_SUCCESS);
    EXPECT_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS);
    aml_area_ze_destroy(&device_area);
}

TEST(HostMemoryDma, CppDmaCopiesAHostAreaOfAnotherSimDevice) {
    const hal::DeviceRef a = zehal::aml::test::sim_device();
    const hal::DeviceRef b = zehal::aml::test::sim_device();
    Mapping host_a(area(a, hal::MemoryKind::host), 1 << 16);
    Mapping host_b(area(b, hal::MemoryKind::host), 1 << 16);
    Mapping shared_a(area(a, hal::MemoryKind::shared), 64);
    auto dma = engine(b);
    round_trip(*dma, b, host_a.get(), host_b.get(), 1 << 16, 5);
    // a's shared memory on b's engine: a peer's memory, copied (docs/devices.md).
    EXPECT_EQ(copy(*dma, host_b.ptr, shared_a.ptr, 64), ZE_RESULT_SUCCESS);
}

// sim host memory on a CUDA engine (pageable there), CUDA host memory on a sim engine,
// both ways, with sizes that take the CUDA staging buffer in several pieces.
TEST(HostMemoryDma, CudaAndSimShareHostMemory) {
    std::string why;
    const hal::DeviceRef gpu = cuda_device(&why);
    if (!gpu) GTEST_SKIP() << why;
    const hal::DeviceRef sim = zehal::aml::test::sim_device();
    const size_t sizes[] = {64, 4096 + 3, (size_t{9} << 20) + 17};
    for (size_t size : sizes) {
        SCOPED_TRACE(size);
        Mapping sim_host(area(sim, hal::MemoryKind::host), size);
        Mapping sim_host2(area(sim, hal::MemoryKind::host), size);
        Mapping cuda_host(area(gpu, hal::MemoryKind::host), size);
        Mapping cuda_host2(area(gpu, hal::MemoryKind::host), size);
        auto on_gpu = engine(gpu);
        auto on_sim = engine(sim);
        round_trip(*on_gpu, gpu, sim_host.get(), sim_host2.get(), size, 1);    // pageable ↔ device
        round_trip(*on_gpu, gpu, sim_host.get(), cuda_host.get(), size, 2);    // pageable → device → pinned
        round_trip(*on_gpu, gpu, cuda_host.get(), sim_host.get(), size, 3);    // pinned → device → pageable
        round_trip(*on_sim, sim, cuda_host.get(), cuda_host2.get(), size, 4);  // CUDA pinned on sim
        // Host to host across backends on either engine.
        const std::vector<unsigned char> bytes = pattern(size, 6);
        std::memcpy(sim_host.get(), bytes.data(), size);
        ASSERT_EQ(copy(*on_gpu, cuda_host.ptr, sim_host.ptr, size), ZE_RESULT_SUCCESS);
        ASSERT_EQ(copy(*on_gpu, sim_host2.ptr, cuda_host.ptr, size), ZE_RESULT_SUCCESS);
        EXPECT_EQ(std::memcmp(sim_host2.get(), bytes.data(), size), 0);
        ASSERT_EQ(copy(*on_sim, cuda_host2.ptr, sim_host2.ptr, size), ZE_RESULT_SUCCESS);
        EXPECT_EQ(std::memcmp(cuda_host2.get(), bytes.data(), size), 0);
    }
    // Device and shared memory stay tied to their device, across backends too.
    Mapping gpu_dev(area(gpu, hal::MemoryKind::device), 64);
    Mapping sim_dev(area(sim, hal::MemoryKind::device), 64);
    Mapping sim_host(area(sim, hal::MemoryKind::host), 64);
    EXPECT_EQ(copy(*engine(sim), sim_host.ptr, gpu_dev.ptr, 64), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(copy(*engine(gpu), gpu_dev.ptr, sim_dev.ptr, 64), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

// A CUDA copy of sim host memory that waits on an event the host signals later: queued in
// stream order, without blocking the submitting thread.
TEST(HostMemoryDma, CudaPageableCopyWaitsInStreamOrder) {
    std::string why;
    const hal::DeviceRef gpu = cuda_device(&why);
    if (!gpu) GTEST_SKIP() << why;
    const hal::DeviceRef sim = zehal::aml::test::sim_device();
    Mapping sim_host(area(sim, hal::MemoryKind::host), 4096);
    Mapping gpu_dev(area(gpu, hal::MemoryKind::device), 4096);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(gpu->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::EventPool> pool;
    ASSERT_EQ(gpu->create_event_pool(2, hal::kPoolHostVisible, &pool), ZE_RESULT_SUCCESS);
    hal::EventRef gate;
    hal::EventRef done;
    ASSERT_EQ(pool->event(0, &gate), ZE_RESULT_SUCCESS);
    ASSERT_EQ(pool->event(1, &done), ZE_RESULT_SUCCESS);
    std::memset(sim_host.get(), 0x11, 4096);
    const hal::EventRef waits[] = {gate};
    ASSERT_EQ(q->append_copy(gpu_dev.ptr, sim_host.ptr, 4096, nullptr, waits), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(sim_host.ptr, gpu_dev.ptr, 2048, done, {}), ZE_RESULT_SUCCESS);
    // Written before the gate opens: the first copy reads it when it runs, not when queued.
    std::memset(sim_host.get(), 0x22, 4096);
    ASSERT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(done->host_synchronize(zehal::kWaitForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(sim_host.get()[0], 0x22);
    EXPECT_EQ(sim_host.get()[2047], 0x22);
    ASSERT_EQ(q->host_synchronize(zehal::kWaitForever), ZE_RESULT_SUCCESS);
}

}  // namespace
