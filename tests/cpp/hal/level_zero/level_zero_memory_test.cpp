// Memory of the level_zero backend: USM of each kind, pointer info, dma-buf import (bad input
// is the HAL conformance suite's).
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <numeric>

#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

TEST(LevelZeroMemory, EachKindAllocatesAndDescribesItself) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    for (hal::MemoryKind kind : {hal::MemoryKind::host, hal::MemoryKind::device, hal::MemoryKind::shared}) {
        void* p = nullptr;
        ASSERT_EQ(dev->allocate(kind, 10000, 256, 0, 0, &p), ZE_RESULT_SUCCESS);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
        hal::PointerInfo info;
        ASSERT_EQ(dev->pointer_info(static_cast<uint8_t*>(p) + 9999, &info), ZE_RESULT_SUCCESS);
        EXPECT_EQ(info.kind, kind);
        EXPECT_EQ(info.base, p);
        EXPECT_EQ(info.size, 10000u);
        EXPECT_EQ(info.alignment, 256u);
        EXPECT_FALSE(info.imported);
        EXPECT_EQ(dev->pointer_info(static_cast<uint8_t*>(p) + 10000, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(dev->free(static_cast<uint8_t*>(p) + 1), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(dev->free(p), ZE_RESULT_SUCCESS);
        EXPECT_EQ(dev->free(p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(dev->pointer_info(p, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
}

TEST(LevelZeroMemory, HostAndSharedMemoryIsHostAccessible) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    for (hal::MemoryKind kind : {hal::MemoryKind::host, hal::MemoryKind::shared}) {
        Memory m(dev, kind, 4096);
        ASSERT_NE(m.ptr, nullptr);
        std::memset(m.ptr, 0x5A, 4096);
        EXPECT_EQ(m.as()[4095], 0x5A);
    }
}

TEST(LevelZeroMemory, ForeignMemoryIsNotItsOwn) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_LEVEL_ZERO(dev);
    std::shared_ptr<hal::Backend> sim;
    ASSERT_EQ(hal::find_backend("sim", &sim), ZE_RESULT_SUCCESS);
    const hal::DeviceRef& other = sim->devices().front();
    Memory foreign(other, hal::MemoryKind::device, 4096);
    hal::PointerInfo info;
    EXPECT_EQ(dev->pointer_info(foreign.ptr, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->free(foreign.ptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    Memory mine(dev, hal::MemoryKind::device, 4096);
    EXPECT_EQ(other->free(mine.ptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST(LevelZeroMemory, ImportsAMemfdAndReadsItsBytes) {
    hal::DeviceRef first;
    ZEHAL_REQUIRE_LEVEL_ZERO(first);
    // A memfd is importable where the driver's device is host memory underneath (zehal's
    // sim device; a GPU takes real dma-bufs only, and says UNSUPPORTED_FEATURE): the first
    // level_zero device that imports one.
    hal::DeviceRef dev;
    for (const hal::BackendStatus& b : hal::backends()) {
        if (b.name != "level_zero") continue;
        for (const hal::DeviceRef& d : b.backend->devices()) {
            const int probe = memfd_create("zehal-probe", MFD_ALLOW_SEALING);
            ASSERT_GE(probe, 0);
            ASSERT_EQ(ftruncate(probe, 4096), 0);
            ASSERT_EQ(fcntl(probe, F_ADD_SEALS, F_SEAL_SHRINK), 0);
            void* p = nullptr;
            const ze_result_t r = d->import_dma_buf(probe, 4096, &p);
            close(probe);
            if (r == ZE_RESULT_SUCCESS) {
                EXPECT_EQ(d->free(p), ZE_RESULT_SUCCESS);
                dev = d;
                break;
            }
            EXPECT_EQ(r, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) << d->properties().name;
        }
    }
    if (!dev) {
        if (level_zero_required()) FAIL() << "no level_zero device imports a sealed memfd";
        GTEST_SKIP() << "no level_zero device imports a sealed memfd";
    }
    constexpr size_t kSize = 8192;
    const int fd = memfd_create("zehal-import", MFD_ALLOW_SEALING);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(ftruncate(fd, kSize), 0);
    ASSERT_EQ(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK), 0);
    std::vector<uint8_t> bytes(kSize);
    std::iota(bytes.begin(), bytes.end(), 0);
    ASSERT_EQ(pwrite(fd, bytes.data(), kSize, 0), static_cast<ssize_t>(kSize));
    void* p = nullptr;
    EXPECT_EQ(dev->import_dma_buf(fd, kSize, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dev->import_dma_buf(-1, kSize, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->import_dma_buf(fd, 0, &p), ZE_RESULT_ERROR_INVALID_SIZE);
    ASSERT_EQ(dev->import_dma_buf(fd, kSize, &p), ZE_RESULT_SUCCESS);
    hal::PointerInfo info;
    ASSERT_EQ(dev->pointer_info(p, &info), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(info.imported);
    EXPECT_EQ(info.kind, hal::MemoryKind::device);
    EXPECT_EQ(info.size, kSize);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(dev->create_queue(hal::kComputeOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    EXPECT_EQ(read_back(dev, *q, p, kSize), bytes);
    EXPECT_EQ(dev->free(p), ZE_RESULT_SUCCESS);
    // The caller keeps the fd.
    EXPECT_EQ(fcntl(fd, F_GETFD), 0);
    close(fd);
}

}  // namespace
}  // namespace zehal::test
