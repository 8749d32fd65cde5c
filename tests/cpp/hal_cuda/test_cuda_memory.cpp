// Device, pinned host and managed memory of the CUDA backend: alignment, pointer_info, free,
// and every bad input with its code.
#include <gtest/gtest.h>

#include <cstring>

#include "cuda_fixture.hpp"

namespace zehal::test {
namespace {

constexpr hal::MemoryKind kKinds[] = {hal::MemoryKind::host, hal::MemoryKind::device, hal::MemoryKind::shared};

TEST(CudaMemory, EveryKindAndAlignment) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    for (hal::MemoryKind kind : kKinds) {
        for (size_t alignment : {size_t{0}, size_t{1}, size_t{64}, size_t{256}, size_t{4096}, size_t{1} << 16,
                                 size_t{1} << 21}) {
            SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << " alignment " << alignment);
            void* p = nullptr;
            ASSERT_EQ(dev->allocate(kind, 1000, alignment, 0, 0, &p), ZE_RESULT_SUCCESS);
            ASSERT_NE(p, nullptr);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (alignment ? alignment : 1), 0u);
            hal::PointerInfo info;
            ASSERT_EQ(dev->pointer_info(static_cast<char*>(p) + 999, &info), ZE_RESULT_SUCCESS);
            EXPECT_EQ(info.kind, kind);
            EXPECT_EQ(info.base, p);
            EXPECT_EQ(info.size, 1000u);
            EXPECT_GE(info.alignment, alignment);
            EXPECT_FALSE(info.imported);
            EXPECT_EQ(dev->pointer_info(static_cast<char*>(p) + 1000, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
            if (kind != hal::MemoryKind::device) std::memset(p, 0x5A, 1000);  // host-accessible
            EXPECT_EQ(dev->free(static_cast<char*>(p) + 8), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // interior
            EXPECT_EQ(dev->free(p), ZE_RESULT_SUCCESS);
            EXPECT_EQ(dev->free(p), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // double free
            EXPECT_EQ(dev->pointer_info(p, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
    }
}

TEST(CudaMemory, BadInput) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    void* p = nullptr;
    const auto dev_kind = hal::MemoryKind::device;
    EXPECT_EQ(dev->allocate(dev_kind, 64, 0, 0, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dev->allocate(static_cast<hal::MemoryKind>(7), 64, 0, 0, 0, &p), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(dev->allocate(dev_kind, 64, 0, 1u << 8, 0, &p), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(dev->allocate(dev_kind, 64, 0, 0, 1, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->allocate(dev_kind, 0, 0, 0, 0, &p), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_EQ(dev->allocate(dev_kind, 64, 3, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT_EQ(dev->allocate(dev_kind, 64, size_t{1} << 31, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    const uint64_t total = dev->properties().memory_bytes;
    EXPECT_EQ(dev->allocate(dev_kind, total + 1, 0, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(dev->allocate(hal::MemoryKind::shared, total + 1, 0, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    // All of the device's memory is more than is free (the context holds some): refused
    // before CUDA is asked, for managed memory, and by CUDA for device memory.
    EXPECT_EQ(dev->allocate(hal::MemoryKind::shared, total, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(dev->allocate(dev_kind, total, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(dev->allocate(hal::MemoryKind::host, ~size_t{0} - 4096, 0, 0, 0, &p),
              ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);

    int on_stack = 0;
    hal::PointerInfo info;
    EXPECT_EQ(dev->free(nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dev->free(&on_stack), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(dev->pointer_info(nullptr, &info), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dev->pointer_info(&on_stack, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dev->pointer_info(&on_stack, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);

    // Still usable.
    Memory m(dev, dev_kind, 1 << 20);
    EXPECT_NE(m.ptr, nullptr);
}

}  // namespace
}  // namespace zehal::test
