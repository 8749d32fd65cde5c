// Virtual memory through the driver (zeVirtualMem*, zePhysicalMem*): reservations backed by
// several physical memories are copy and fill operands of command lists, physical host
// memory, access, what a mapped address is, and bad input.
#include <cstring>
#include <vector>

#include "ze_fixture.hpp"

namespace {

using zetest::kForever;

class ZeVirtualMemory : public zetest::ZeDriver {
protected:
    void SetUp() override {
        ZeDriver::SetUp();
        ZE_OK(zeVirtualMemQueryPageSize(context, device, 1, &page));
        ASSERT_GT(page, 0u);
    }

    ze_physical_mem_handle_t physical(size_t size, ze_physical_mem_flags_t flags = 0) {
        ze_physical_mem_desc_t desc{ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, nullptr, flags, size};
        ze_physical_mem_handle_t p = nullptr;
        EXPECT_EQ(zePhysicalMemCreate(context, flags == 0 ? device : nullptr, &desc, &p), ZE_RESULT_SUCCESS);
        return p;
    }
    void* reserve(size_t size) {
        void* v = nullptr;
        EXPECT_EQ(zeVirtualMemReserve(context, nullptr, size, &v), ZE_RESULT_SUCCESS);
        return v;
    }
    static void* at(void* base, size_t offset) { return static_cast<char*>(base) + offset; }

    size_t page = 0;
};

constexpr ze_physical_mem_flags_t kOnHost = 1u << 1;  // ZE_PHYSICAL_MEM_FLAG_ALLOCATE_ON_HOST

TEST_F(ZeVirtualMemory, FillAndCopyAcrossTwoPhysicalMemories) {
    void* v = reserve(2 * page);
    ze_physical_mem_handle_t a = physical(page);
    ze_physical_mem_handle_t b = physical(page);
    ZE_OK(zeVirtualMemMap(context, v, page, a, 0, ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE));
    ZE_OK(zeVirtualMemMap(context, at(v, page), page, b, 0, ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE));
    const uint8_t nine = 9;
    std::vector<uint8_t> out(2 * page);
    ZE_OK(zeCommandListAppendMemoryFill(list, v, &nine, 1, 2 * page, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendBarrier(list, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, out.data(), v, 2 * page, nullptr, 0, nullptr));
    finish(list);
    for (size_t i = 0; i < out.size(); ++i) ASSERT_EQ(out[i], 9) << i;

    // What the address is: device memory of the device, in the range of the reservation.
    ze_memory_allocation_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES;
    ze_device_handle_t owner = nullptr;
    ZE_OK(zeMemGetAllocProperties(context, at(v, page + 8), &props, &owner));
    EXPECT_EQ(props.type, ZE_MEMORY_TYPE_DEVICE);
    EXPECT_EQ(owner, device);
    void* base = nullptr;
    size_t size = 0;
    ZE_OK(zeMemGetAddressRange(context, at(v, page + 8), &base, &size));
    EXPECT_EQ(base, v);
    EXPECT_EQ(size, 2 * page);
    EXPECT_EQ(zeMemFree(context, v), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // not an allocation
    ze_memory_free_ext_desc_t defer{ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC, nullptr,
                                    ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE};
    EXPECT_EQ(zeMemFreeExt(context, &defer, v), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // nor when deferred

    EXPECT_EQ(zePhysicalMemDestroy(context, a), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    ZE_OK(zeVirtualMemUnmap(context, v, 2 * page));
    ZE_OK(zeVirtualMemUnmap(context, v, page));  // nothing mapped: nothing to do
    ZE_OK(zePhysicalMemDestroy(context, a));
    ZE_OK(zePhysicalMemDestroy(context, b));
    EXPECT_EQ(zePhysicalMemDestroy(context, b), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeVirtualMemFree(context, v, 2 * page));
    EXPECT_EQ(zeVirtualMemFree(context, v, 2 * page), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

TEST_F(ZeVirtualMemory, AccessIsKeptAndEnforcedAtAppend) {
    void* v = reserve(page);
    ze_physical_mem_handle_t p = physical(page);
    ze_memory_access_attribute_t access = ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE;
    size_t size = 0;
    ZE_OK(zeVirtualMemGetAccessAttribute(context, v, page, &access, &size));
    EXPECT_EQ(access, ZE_MEMORY_ACCESS_ATTRIBUTE_NONE);
    EXPECT_GE(size, page);
    std::vector<uint8_t> host_bytes(page, 3);
    // Unmapped, then mapped without access: refused at append.
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, v, host_bytes.data(), page, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeVirtualMemMap(context, v, page, p, 0, ZE_MEMORY_ACCESS_ATTRIBUTE_NONE));
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, host_bytes.data(), v, page, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeVirtualMemSetAccessAttribute(context, v, page, ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY));
    ZE_OK(zeVirtualMemGetAccessAttribute(context, v, page, &access, &size));
    EXPECT_EQ(access, ZE_MEMORY_ACCESS_ATTRIBUTE_READONLY);
    EXPECT_EQ(size, page);
    EXPECT_EQ(zeCommandListAppendMemoryCopy(list, v, host_bytes.data(), page, nullptr, 0, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeCommandListAppendMemoryCopy(list, host_bytes.data(), v, page, nullptr, 0, nullptr));
    finish(list);
    // The device says that read-only is enforced.
    ze_device_readonly_memory_ext_properties_t ro{
        static_cast<ze_structure_type_t>(ZEHAL_STYPE_DEVICE_READONLY_MEMORY_EXT_PROPERTIES), nullptr,
        ZE_DEVICE_READONLY_MEMORY_CAPABILITY_NONE};
    ze_device_properties_t dp{};
    dp.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES;
    dp.pNext = &ro;
    ZE_OK(zeDeviceGetProperties(device, &dp));
    EXPECT_EQ(ro.readonlyCapability, ZE_DEVICE_READONLY_MEMORY_CAPABILITY_ENFORCED);
    ZE_OK(zeVirtualMemUnmap(context, v, page));
    ZE_OK(zePhysicalMemDestroy(context, p));
    ZE_OK(zeVirtualMemFree(context, v, page));
}

TEST_F(ZeVirtualMemory, PhysicalHostMemoryIsSeenThroughEveryMapping) {
    ze_physical_mem_handle_t host_pages = nullptr;
    ze_physical_mem_desc_t desc{ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, nullptr, kOnHost, page};
    const ze_result_t made = zePhysicalMemCreate(context, nullptr, &desc, &host_pages);
    if (made == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) GTEST_SKIP() << "no physical host memory on this device";
    ASSERT_EQ(made, ZE_RESULT_SUCCESS);
    void* v0 = reserve(page);
    void* v1 = reserve(page);
    ZE_OK(zeVirtualMemMap(context, v0, page, host_pages, 0, ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE));
    ZE_OK(zeVirtualMemMap(context, v1, page, host_pages, 0, ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE));
    const uint32_t word = 0xcafecafe;
    ZE_OK(zeCommandListAppendMemoryFill(list, v0, &word, sizeof word, page, nullptr, 0, nullptr));
    finish(list);
    uint32_t back = 0;
    ZE_OK(zeCommandListAppendMemoryCopy(list, &back, at(v1, page - 4), 4, nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(back, word);
    ZE_OK(zeVirtualMemFree(context, v0, page));  // unmaps its mapping
    ZE_OK(zeVirtualMemUnmap(context, v1, page));
    ZE_OK(zeVirtualMemFree(context, v1, page));
    ZE_OK(zePhysicalMemDestroy(context, host_pages));
}

TEST_F(ZeVirtualMemory, BadInputIsRefused) {
    void* v = nullptr;
    size_t size = 0;
    EXPECT_EQ(zeVirtualMemReserve(nullptr, nullptr, page, &v), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeVirtualMemReserve(context, nullptr, page, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeVirtualMemReserve(context, nullptr, 0, &v), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(zeVirtualMemReserve(context, nullptr, page + 1, &v), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(zeVirtualMemQueryPageSize(context, nullptr, page, &size), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeVirtualMemQueryPageSize(context, device, page, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_physical_mem_desc_t desc{ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC, nullptr, 0, page};
    ze_physical_mem_handle_t p = nullptr;
    EXPECT_EQ(zePhysicalMemCreate(context, device, nullptr, &p), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zePhysicalMemCreate(context, device, &desc, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zePhysicalMemCreate(context, nullptr, &desc, &p), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    desc.flags = 1u << 5;
    EXPECT_EQ(zePhysicalMemCreate(context, device, &desc, &p), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    desc.flags = 0;
    desc.size = 0;
    EXPECT_EQ(zePhysicalMemCreate(context, device, &desc, &p), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(zePhysicalMemDestroy(context, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    v = reserve(2 * page);
    p = physical(page);
    const auto rw = ZE_MEMORY_ACCESS_ATTRIBUTE_READWRITE;
    EXPECT_EQ(zeVirtualMemMap(context, v, page, nullptr, 0, rw), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeVirtualMemMap(context, nullptr, page, p, 0, rw), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeVirtualMemMap(context, v, 0, p, 0, rw), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(zeVirtualMemMap(context, at(v, 1), page, p, 0, rw), ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT);
    EXPECT_EQ(zeVirtualMemMap(context, v, page, p, 0, static_cast<ze_memory_access_attribute_t>(3)),
              ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(zeVirtualMemMap(context, v, 2 * page, p, 0, rw), ZE_RESULT_ERROR_INVALID_SIZE);
    std::vector<char> outside(4 * page);
    void* aligned = reinterpret_cast<void*>((reinterpret_cast<uintptr_t>(outside.data()) + page - 1) & ~(page - 1));
    EXPECT_EQ(zeVirtualMemMap(context, aligned, page, p, 0, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeVirtualMemUnmap(context, aligned, page), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeVirtualMemMap(context, v, page, p, 0, rw));
    EXPECT_EQ(zeVirtualMemMap(context, v, page, p, 0, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // over a mapping
    ze_memory_access_attribute_t access{};
    EXPECT_EQ(zeVirtualMemGetAccessAttribute(context, v, page, nullptr, &size), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeVirtualMemGetAccessAttribute(context, v, 0, &access, &size), ZE_RESULT_ERROR_UNSUPPORTED_SIZE);
    EXPECT_EQ(zeVirtualMemSetAccessAttribute(context, at(v, page), page, rw), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeVirtualMemFree(context, v, page), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(zeVirtualMemFree(context, nullptr, page), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ZE_OK(zeVirtualMemUnmap(context, v, page));
    ZE_OK(zePhysicalMemDestroy(context, p));
    ZE_OK(zeVirtualMemFree(context, v, 2 * page));
}

}  // namespace
