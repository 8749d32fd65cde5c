// Device, pinned host and managed memory of the CUDA backend: CUDA's limits. Bad input,
// kinds, alignments, pointer_info and frees are the HAL conformance suite's
// (cuda_contract_test.cpp).
#include <gtest/gtest.h>

#include "support/backend_devices.hpp"

namespace zehal::test {
namespace {

TEST(CudaMemory, AllocationsBeyondWhatIsFreeAreRefused) {
    hal::DeviceRef dev;
    ZEHAL_REQUIRE_CUDA(dev);
    void* p = nullptr;
    const auto dev_kind = hal::MemoryKind::device;
    const uint64_t total = dev->properties().memory_bytes;
    EXPECT_EQ(dev->allocate(dev_kind, total + 1, 0, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(dev->allocate(hal::MemoryKind::shared, total + 1, 0, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    // All of the device's memory is more than is free (the context holds some): refused
    // before CUDA is asked, for managed memory, and by CUDA for device memory.
    EXPECT_EQ(dev->allocate(hal::MemoryKind::shared, total, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(dev->allocate(dev_kind, total, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY);
    EXPECT_EQ(dev->allocate(hal::MemoryKind::host, ~size_t{0} - 4096, 0, 0, 0, &p), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    EXPECT_EQ(p, nullptr);

    // Still usable.
    Memory m(dev, dev_kind, 1 << 20);
    EXPECT_NE(m.ptr, nullptr);
}

}  // namespace
}  // namespace zehal::test
