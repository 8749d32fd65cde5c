// Residency (every allocation stays resident: making it resident or evicting it is checked
// and changes nothing) and the memory free policies extension (a blocking free and a deferred
// one, which queue_order_test.cpp runs behind a wait that the host releases).
#include <cstring>
#include <string>
#include <vector>

#include "ze_fixture.hpp"

namespace {

using zetest::kForever;

class ResidencyAndFree : public zetest::ZeDriver {};

TEST_F(ResidencyAndFree, ResidencyIsCheckedAndChangesNothing) {
    ZE_OK(zeContextMakeMemoryResident(context, device, dev, kBytes));
    ZE_OK(zeContextEvictMemory(context, device, dev, kBytes));
    // Still usable after an eviction: a copy through it keeps the bytes.
    std::memset(host, 0x6B, 64);
    ZE_OK(zeCommandListAppendMemoryCopy(list, dev, host, 64, nullptr, 0, nullptr));
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, dev, 64, nullptr, 0, nullptr));
    finish(list);
    EXPECT_EQ(std::memcmp(host, host2, 64), 0);
    EXPECT_EQ(zeContextMakeMemoryResident(nullptr, device, dev, kBytes), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeContextEvictMemory(context, nullptr, dev, kBytes), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeContextMakeMemoryResident(context, device, nullptr, kBytes), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(ResidencyAndFree, TheDriverOffersTheBlockingAndDeferredFreePolicies) {
    uint32_t count = 0;
    ZE_OK(zeDriverGetExtensionProperties(driver, &count, nullptr));
    std::vector<ze_driver_extension_properties_t> ext(count);
    ZE_OK(zeDriverGetExtensionProperties(driver, &count, ext.data()));
    bool listed = false;
    for (const auto& e : ext) listed = listed || std::string(e.name) == ZE_MEMORY_FREE_POLICIES_EXT_NAME;
    EXPECT_TRUE(listed);
    ze_driver_memory_free_ext_properties_t free{ZE_STRUCTURE_TYPE_DRIVER_MEMORY_FREE_EXT_PROPERTIES, nullptr, 0};
    ze_driver_properties_t props{ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, &free, {}, 0};
    ZE_OK(zeDriverGetProperties(driver, &props));
    EXPECT_EQ(free.freePolicies,
              ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE | ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE);
}

TEST_F(ResidencyAndFree, ABlockingFreeFreesAndBadRequestsLoseNothing) {
    ze_device_mem_alloc_desc_t dd{ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, nullptr, 0, 0};
    void* mem = nullptr;
    ZE_OK(zeMemAllocDevice(context, &dd, 4096, 64, device, &mem));
    // Refused requests leave the allocation.
    ze_memory_free_ext_desc_t unknown{ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC, nullptr, 1u << 7};
    EXPECT_EQ(zeMemFreeExt(context, &unknown, mem), ZE_RESULT_ERROR_INVALID_ENUMERATION);
    EXPECT_EQ(zeMemFreeExt(context, nullptr, mem), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_memory_free_ext_desc_t blocking{ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC, nullptr,
                                       ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE};
    EXPECT_EQ(zeMemFreeExt(nullptr, &blocking, mem), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeMemFreeExt(context, &blocking, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_memory_allocation_properties_t ap{ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES, nullptr,
                                         ZE_MEMORY_TYPE_UNKNOWN, 0, 0};
    ZE_OK(zeMemGetAllocProperties(context, mem, &ap, nullptr));
    EXPECT_EQ(ap.type, ZE_MEMORY_TYPE_DEVICE);
    // A copy into it still queued when the free comes: the free waits for it.
    ZE_OK(zeCommandListAppendMemoryCopy(list, mem, host, 4096, nullptr, 0, nullptr));
    ZE_OK(zeMemFreeExt(context, &blocking, mem));
    ZE_OK(zeMemGetAllocProperties(context, mem, &ap, nullptr));
    EXPECT_EQ(ap.type, ZE_MEMORY_TYPE_UNKNOWN);
    // Freed once: a second free is refused.
    EXPECT_EQ(zeMemFreeExt(context, &blocking, mem), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_memory_free_ext_desc_t none{ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC, nullptr, 0};
    ZE_OK(zeMemAllocDevice(context, &dd, 4096, 64, device, &mem));
    ZE_OK(zeMemFreeExt(context, &none, mem));
    // Both policies at once: the blocking free, done when the call returns.
    ze_memory_free_ext_desc_t both{ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC, nullptr,
                                   ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE |
                                       ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE};
    ZE_OK(zeMemAllocDevice(context, &dd, 4096, 64, device, &mem));
    ZE_OK(zeCommandListAppendMemoryCopy(list, mem, host, 4096, nullptr, 0, nullptr));
    ZE_OK(zeMemFreeExt(context, &both, mem));
    ZE_OK(zeMemGetAllocProperties(context, mem, &ap, nullptr));
    EXPECT_EQ(ap.type, ZE_MEMORY_TYPE_UNKNOWN);
    // A deferred free checks its pointer at once: an interior pointer is refused.
    ze_memory_free_ext_desc_t defer{ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC, nullptr,
                                    ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE};
    ZE_OK(zeMemAllocDevice(context, &dd, 4096, 64, device, &mem));
    EXPECT_EQ(zeMemFreeExt(context, &defer, static_cast<char*>(mem) + 64), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ZE_OK(zeMemFreeExt(context, &defer, mem));
}

}  // namespace
