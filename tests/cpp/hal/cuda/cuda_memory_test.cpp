// Device, pinned host and managed memory of the CUDA backend: every bad input with its code,
// CUDA's limits included. Kinds, alignments, pointer_info and frees are the HAL conformance
// suite's (cuda_contract_test.cpp).
#include <gtest/gtest.h>

#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

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
    EXPECT_EQ(dev->allocate(hal::MemoryKind::host, ~size_t{0} - 4096, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);

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
