// The memory contract (cpp/hal/device.hpp, contract §1, §2.2): every kind allocates with
// its alignment and describes itself; bad sizes, alignments, kinds and ordinals, frees of
// pointers the device did not allocate, and double frees are refused with their codes.
#include <cstring>

#include "contract_fixture.hpp"

namespace zehal::test::contract {
namespace {

constexpr hal::MemoryKind kKinds[] = {hal::MemoryKind::host, hal::MemoryKind::device, hal::MemoryKind::shared};

TEST_P(MemoryContract, EveryKindAndAlignmentDescribesItself) {
    for (hal::MemoryKind kind : kKinds) {
        for (size_t alignment :
             {size_t{0}, size_t{1}, size_t{64}, size_t{256}, size_t{4096}, size_t{1} << 16, size_t{1} << 21}) {
            SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind) << " alignment " << alignment);
            void* p = nullptr;
            ASSERT_EQ(device_->allocate(kind, 1000, alignment, 0, 0, &p), ZE_RESULT_SUCCESS);
            ASSERT_NE(p, nullptr);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (alignment ? alignment : 1), 0u);
            hal::PointerInfo info;
            ASSERT_EQ(device_->pointer_info(static_cast<char*>(p) + 999, &info), ZE_RESULT_SUCCESS);
            EXPECT_EQ(info.kind, kind);
            EXPECT_EQ(info.base, p);
            EXPECT_EQ(info.size, 1000u);
            EXPECT_GE(info.alignment, alignment);
            EXPECT_FALSE(info.imported);
            EXPECT_EQ(device_->pointer_info(static_cast<char*>(p) + 1000, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
            if (kind != hal::MemoryKind::device) std::memset(p, 0x5A, 1000);                        // host-accessible
            EXPECT_EQ(device_->free(static_cast<char*>(p) + 8), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // interior
            EXPECT_EQ(device_->free(p), ZE_RESULT_SUCCESS);
            EXPECT_EQ(device_->free(p), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // double free
            EXPECT_EQ(device_->pointer_info(p, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        }
    }
}

TEST_P(MemoryContract, AllocateBadInputIsRefusedAndLeavesTheOutputAlone) {
    const auto device = hal::MemoryKind::device;
    const hal::DeviceProperties& props = device_->properties();
    void* p = reinterpret_cast<void*>(0x1234);
    EXPECT_EQ(device_->allocate(device, 64, 0, 0, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->allocate(static_cast<hal::MemoryKind>(7), 64, 0, 0, 0, &p), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(device_->allocate(device, 64, 0, 0, props.memory_ordinals, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    for (hal::MemoryKind kind : kKinds) {
        SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind));
        EXPECT_EQ(device_->allocate(kind, 0, 0, 0, 0, &p), ZE_RESULT_ERROR_INVALID_SIZE);
        EXPECT_EQ(device_->allocate(kind, 64, 3, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
        EXPECT_EQ(device_->allocate(kind, 64, 48, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    }
    EXPECT_EQ(device_->allocate(device, props.max_allocation_bytes + 1, 0, 0, 0, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(p, reinterpret_cast<void*>(0x1234));
    Allocation still_usable(device_, device, 64);
    EXPECT_NE(still_usable.ptr(), nullptr);
}

TEST_P(MemoryContract, FreeOfAPointerNotAllocatedIsRefused) {
    int on_stack = 0;
    EXPECT_EQ(device_->free(nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->free(&on_stack), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    for (hal::MemoryKind kind : kKinds) {
        Allocation m(device_, kind, 256);
        EXPECT_EQ(device_->free(m.as() + 8), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // interior
    }
}

TEST_P(MemoryContract, DoubleFreeIsRefused) {
    for (hal::MemoryKind kind : kKinds) {
        SCOPED_TRACE(testing::Message() << "kind " << static_cast<int>(kind));
        void* p = nullptr;
        ASSERT_EQ(device_->allocate(kind, 256, 0, 0, 0, &p), ZE_RESULT_SUCCESS);
        ASSERT_EQ(device_->free(p), ZE_RESULT_SUCCESS);
        EXPECT_EQ(device_->free(p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
        hal::PointerInfo info;
        EXPECT_EQ(device_->pointer_info(p, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    }
}

TEST_P(MemoryContract, PointerInfoBadInput) {
    int on_stack = 0;
    hal::PointerInfo info;
    EXPECT_EQ(device_->pointer_info(nullptr, &info), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->pointer_info(&on_stack, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(device_->pointer_info(&on_stack, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST_P(MemoryContract, DeviceMemoryOfAnotherDeviceIsNotItsOwn) {
    hal::DeviceRef other = other_device();
    ASSERT_NE(other, nullptr);
    Allocation theirs(other, hal::MemoryKind::device, 4096), mine(device_, hal::MemoryKind::device, 4096);
    hal::PointerInfo info;
    EXPECT_EQ(device_->pointer_info(theirs.ptr(), &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(device_->free(theirs.ptr()), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(other->pointer_info(mine.ptr(), &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(other->free(mine.ptr()), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace zehal::test::contract
