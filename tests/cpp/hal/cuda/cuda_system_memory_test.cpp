// System memory on the CUDA backend (contract §2.2): memory no zehal area mapped is copied
// and filled as pageable memory, staged through pinned buffers, at once on an idle stream
// and in stream order behind waits; memory the CUDA driver allocated for someone else
// (cuMemAlloc called directly, as CuPy and PyTorch do) is used as device memory.
#include <gtest/gtest.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "support/backend_devices.hpp"
#include "hal/sim/sim_backend.hpp"
#include "raw_cuda.hpp"

namespace zehal::test {
namespace {

std::shared_ptr<hal::Queue> make_queue(const hal::DeviceRef& dev) {
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(dev->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    return q;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 gen(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(gen());
    return v;
}

// Sizes below one chunk, of a few chunks, and of many (both staging buffers in turn).
constexpr size_t kSizes[] = {64, (1u << 20) + 3, (9u << 20) + 5, (40u << 20) + 1};

TEST(CudaSystemMemory, MallocedMemoryToDeviceAndBackOnAnIdleStream) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev);
    for (size_t size : kSizes) {
        SCOPED_TRACE(size);
        const std::vector<uint8_t> data = random_bytes(size, static_cast<uint32_t>(size));
        std::vector<uint8_t> back(size, 0);
        Memory d(dev, hal::MemoryKind::device, size);
        copy_and_wait(*q, d.ptr, data.data(), size);
        EXPECT_EQ(read_back(dev, *q, d.ptr, size), data);
        copy_and_wait(*q, back.data(), d.ptr, size);
        EXPECT_EQ(back, data);
    }
}

TEST(CudaSystemMemory, StagedCopiesKeepStreamOrderBehindAWait) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev);
    constexpr size_t kSize = (9u << 20) + 5;
    const std::vector<uint8_t> data = random_bytes(kSize, 3);
    Memory a(dev, hal::MemoryKind::device, kSize), b(dev, hal::MemoryKind::device, kSize);
    auto* middle = static_cast<uint8_t*>(std::malloc(kSize));
    ASSERT_NE(middle, nullptr);
    std::memset(middle, 0, kSize);
    Memory pinned(dev, hal::MemoryKind::host, kSize);
    std::memcpy(pinned.ptr, data.data(), kSize);
    copy_and_wait(*q, a.ptr, pinned.ptr, kSize);
    // Behind a host signal: device -> malloc'd -> device, each in stream order (the second
    // reads what the first wrote), nothing run before the signal.
    Events ev(dev, 2);
    const hal::EventRef gate[] = {ev.events[0]};
    ASSERT_EQ(q->append_copy(middle, a.ptr, kSize, nullptr, gate), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(b.ptr, middle, kSize, ev.events[1], {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ev.events[1]->query(), ZE_RESULT_NOT_READY);
    EXPECT_EQ(middle[kSize - 1], 0);
    ASSERT_EQ(ev.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev.events[1]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(middle, data.data(), kSize), 0);
    EXPECT_EQ(read_back(dev, *q, b.ptr, kSize), data);
    std::free(middle);
}

TEST(CudaSystemMemory, StackVectorAndFills) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    auto q = make_queue(dev);
    Memory d(dev, hal::MemoryKind::device, 4096);
    uint8_t on_stack[4096];
    for (size_t i = 0; i < sizeof on_stack; ++i) on_stack[i] = static_cast<uint8_t>(i * 3);
    copy_and_wait(*q, d.ptr, on_stack, 4096);
    std::vector<uint8_t> vec(4096, 0);
    copy_and_wait(*q, vec.data(), d.ptr, 4096);
    EXPECT_EQ(std::memcmp(vec.data(), on_stack, 4096), 0);
    // Between two system buffers, and a fill of one.
    std::vector<uint8_t> other(4096, 0);
    copy_and_wait(*q, other.data(), vec.data(), 4096);
    EXPECT_EQ(other, vec);
    const uint8_t pattern[4] = {9, 8, 7, 6};
    ASSERT_EQ(q->append_fill(vec.data() + 4, pattern, 4, 4092, nullptr, {}), ZE_RESULT_SUCCESS);  // to the end
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(vec[3], on_stack[3]);
    EXPECT_EQ(vec[4], 9);
    EXPECT_EQ(vec[4095], 6);
    // Overlap and unmapped pages are still refused.
    EXPECT_EQ(q->append_copy(vec.data() + 8, vec.data(), 64, nullptr, {}), ZE_RESULT_ERROR_OVERLAPPING_REGIONS);
    const auto* unmapped = reinterpret_cast<const void*>(uintptr_t{4096});
    EXPECT_EQ(q->append_copy(d.ptr, unmapped, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

// The driver as another library uses it: the primary context of the device with `uuid`
// current on this thread while it lives.
struct RawDriver : bench::RawCuda {
    bench::CUdevice device = 0;
    bench::CUcontext ctx = nullptr;

    bool open(const std::array<uint8_t, 16>& uuid) {
        return load() && bench::find_cuda_device(*this, uuid, &device) &&
               cuDevicePrimaryCtxRetain(&ctx, device) == bench::kCudaSuccess &&
               cuCtxPushCurrent(ctx) == bench::kCudaSuccess;
    }
    ~RawDriver() {
        if (!ctx) return;
        bench::CUcontext popped = nullptr;
        cuCtxPopCurrent(&popped);
        cuDevicePrimaryCtxRelease(device);
    }
};

TEST(CudaSystemMemory, MemoryTheDriverAllocatedForSomeoneElseIsDeviceMemory) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    RawDriver raw;
    ASSERT_TRUE(raw.open(dev->properties().uuid));
    constexpr size_t kSize = (2u << 20) + 7;
    bench::CUdeviceptr theirs = 0, managed = 0;
    ASSERT_EQ(raw.cuMemAlloc(&theirs, kSize), 0);
    ASSERT_EQ(raw.cuMemAllocManaged(&managed, kSize, 1 /* CU_MEM_ATTACH_GLOBAL */), 0);
    auto* ptr = reinterpret_cast<uint8_t*>(theirs);
    auto* shared = reinterpret_cast<uint8_t*>(managed);
    auto q = make_queue(dev);
    const std::vector<uint8_t> data = random_bytes(kSize, 11);
    Memory mine(dev, hal::MemoryKind::device, kSize);
    // In and out through zehal's memory and system memory; the CPU never touches `ptr` (a
    // CPU copy of device memory would fault: the test crashes instead of passing).
    copy_and_wait(*q, ptr, data.data(), kSize);
    copy_and_wait(*q, mine.ptr, ptr, kSize);
    EXPECT_EQ(read_back(dev, *q, mine.ptr, kSize), data);
    copy_and_wait(*q, shared, ptr, kSize);
    EXPECT_EQ(std::memcmp(shared, data.data(), kSize), 0);
    const uint8_t pattern[2] = {0xAB, 0xCD};
    ASSERT_EQ(q->append_fill(ptr + 1, pattern, 2, 1024, nullptr, {}), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> back(1026, 0);
    copy_and_wait(*q, back.data(), ptr, 1026);
    EXPECT_EQ(back[0], data[0]);
    EXPECT_EQ(back[1], 0xAB);
    EXPECT_EQ(back[1024], 0xCD);
    EXPECT_EQ(back[1025], data[1025]);
    // Its bounds are the driver's: past the end of that allocation is refused.
    EXPECT_EQ(q->append_copy(ptr + 16, data.data(), kSize, nullptr, {}), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(raw.cuMemFree(theirs), 0);
    EXPECT_EQ(raw.cuMemFree(managed), 0);
}

TEST(CudaSystemMemory, AnotherDevicesMemoryIsStillRefused) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    hal::DeviceRef sim;
    ASSERT_EQ(sim::create_device({}, &sim), ZE_RESULT_SUCCESS);
    Memory theirs(sim, hal::MemoryKind::device, 4096);
    Memory mine(dev, hal::MemoryKind::device, 4096);
    std::vector<uint8_t> system(4096);
    auto q = make_queue(dev);
    const uint8_t pattern[1] = {0};
    EXPECT_EQ(q->append_copy(mine.ptr, theirs.ptr, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_copy(theirs.ptr, system.data(), 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(q->append_fill(theirs.ptr, pattern, 1, 64, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace zehal::test
