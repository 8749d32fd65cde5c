// Areas through the C API and the C++ class: creation checks, mapping of every kind with
// its alignment, the mmap/munmap edge cases, out of memory, a lost device, fprintf and the
// default areas.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>

#include "aml.h"
#include "aml/area.hpp"
#include "aml/area/ze.h"
#include "aml_test_util.hpp"

namespace {

using zehal::aml::Area;
using zehal::aml::test::handle;
using zehal::aml::test::sim_device;
namespace hal = zehal::hal;

struct AreaGuard {
    aml_area* area = nullptr;
    ~AreaGuard() { aml_area_ze_destroy(&area); }
};

TEST(AreaCreate, RejectsBadArguments) {
    hal::DeviceRef dev = sim_device();
    aml_area* a = nullptr;
    EXPECT_EQ(aml_area_ze_device_create(nullptr, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_device_create(&a, nullptr, 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), -AML_EINVAL);
    for (int flags : {0, 3, 4, -1})
        EXPECT_EQ(aml_area_ze_device_create(&a, handle(dev), 0, 0, 64, flags), -AML_EINVAL) << flags;
    for (size_t alignment : {size_t{0}, size_t{3}, size_t{48}, size_t{100}})
        EXPECT_EQ(aml_area_ze_device_create(&a, handle(dev), 0, 0, alignment, AML_AREA_ZE_MMAP_DEVICE_FLAGS),
                  -AML_EINVAL)
            << alignment;
    const uint32_t ordinals = dev->properties().memory_ordinals;
    EXPECT_EQ(aml_area_ze_device_create(&a, handle(dev), ordinals, 0, 64, AML_AREA_ZE_MMAP_SHARED_FLAGS), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_host_create(nullptr, 0, 64), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_host_create(&a, 0, 0), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_host_create(&a, 0, 24), -AML_EINVAL);
    EXPECT_EQ(a, nullptr);
    aml_area_ze_destroy(nullptr);
    aml_area_ze_destroy(&a);  // NULL *area: nothing to do
}

// Maps from `area` with several sizes, checks the alignment and, for host-accessible
// memory, that every byte can be written and read back.
void check_maps(aml_area* area, size_t alignment, bool host_accessible) {
    void* ptrs[4];
    const size_t sizes[4] = {1, 100, 4096, (1u << 20) + 3};
    for (int i = 0; i < 4; ++i) {
        ptrs[i] = aml_area_mmap(area, sizes[i], nullptr);
        ASSERT_NE(ptrs[i], nullptr) << aml_strerror(aml_errno);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(ptrs[i]) % alignment, 0u);
        if (host_accessible) {
            std::memset(ptrs[i], i + 1, sizes[i]);
            EXPECT_EQ(static_cast<unsigned char*>(ptrs[i])[sizes[i] - 1], i + 1);
        }
    }
    for (int i = 0; i < 4; ++i) EXPECT_EQ(aml_area_munmap(area, ptrs[i], sizes[i]), AML_SUCCESS);
}

TEST(AreaMap, EveryKindHonoursItsAlignment) {
    hal::DeviceRef dev = sim_device();
    for (size_t alignment : {size_t{1}, size_t{64}, size_t{4096}, size_t{1} << 16}) {
        AreaGuard d, s, h;
        ASSERT_EQ(aml_area_ze_device_create(&d.area, handle(dev), 0, 0, alignment, AML_AREA_ZE_MMAP_DEVICE_FLAGS),
                  AML_SUCCESS);
        ASSERT_EQ(aml_area_ze_device_create(&s.area, handle(dev), 0, AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED, alignment,
                                            AML_AREA_ZE_MMAP_SHARED_FLAGS),
                  AML_SUCCESS);
        ASSERT_EQ(aml_area_ze_host_create(&h.area, AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED, alignment), AML_SUCCESS);
        EXPECT_EQ(d.area->ops, &aml_area_ze_ops_device);
        EXPECT_EQ(s.area->ops, &aml_area_ze_ops_shared);
        EXPECT_EQ(h.area->ops, &aml_area_ze_ops_host);
        check_maps(d.area, alignment, false);
        check_maps(s.area, alignment, true);
        check_maps(h.area, alignment, true);
    }
}

TEST(AreaMap, PerKindFunctionsMapTheirKindOnly) {
    hal::DeviceRef dev = sim_device();
    AreaGuard d, s, h;
    ASSERT_EQ(aml_area_ze_device_create(&d.area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_device_create(&s.area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_SHARED_FLAGS), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_host_create(&h.area, 0, 64), AML_SUCCESS);

    const struct {
        aml_area* area;
        void* (*mmap)(const aml_area_data*, size_t, aml_area_mmap_options*);
        hal::MemoryKind kind;
    } cases[] = {{d.area, aml_area_ze_mmap_device, hal::MemoryKind::device},
                 {s.area, aml_area_ze_mmap_shared, hal::MemoryKind::shared},
                 {h.area, aml_area_ze_mmap_host, hal::MemoryKind::host}};
    for (const auto& c : cases) {
        void* p = c.mmap(c.area->data, 256, nullptr);
        ASSERT_NE(p, nullptr);
        hal::PointerInfo info;
        ASSERT_EQ(dev->pointer_info(p, &info), ZE_RESULT_SUCCESS);
        EXPECT_EQ(info.kind, c.kind);
        EXPECT_EQ(aml_area_ze_munmap(c.area->data, p, 256), AML_SUCCESS);
    }
    // A kind other than the area's, and no area data.
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_area_ze_mmap_device(h.area->data, 256, nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_EINVAL);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_area_ze_mmap_host(nullptr, 256, nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_EINVAL);
    int x = 0;
    EXPECT_EQ(aml_area_ze_munmap(nullptr, &x, 4), -AML_EINVAL);
}

TEST(AreaMap, MmapAndMunmapEdgeCases) {
    hal::DeviceRef dev = sim_device();
    AreaGuard a, other;
    ASSERT_EQ(aml_area_ze_device_create(&a.area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_device_create(&other.area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS),
              AML_SUCCESS);

    aml_errno = AML_EPERM;  // size 0: NULL, aml_errno unchanged
    EXPECT_EQ(aml_area_mmap(a.area, 0, nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_EPERM);
    EXPECT_EQ(aml_area_mmap(nullptr, 0, nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_EPERM);
    EXPECT_EQ(aml_area_mmap(nullptr, 64, nullptr), nullptr);  // null area
    EXPECT_EQ(aml_errno, AML_EINVAL);

    void* p = aml_area_mmap(a.area, 1024, nullptr);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(aml_area_munmap(a.area, nullptr, 1024), AML_SUCCESS);  // NULL pointer
    EXPECT_EQ(aml_area_munmap(a.area, p, 0), AML_SUCCESS);           // size 0: nothing done
    EXPECT_EQ(aml_area_munmap(nullptr, p, 1024), -AML_EINVAL);       // null area
    EXPECT_EQ(aml_area_munmap(other.area, p, 1024), -AML_EINVAL);    // mapped by another area
    int stack = 0;
    EXPECT_EQ(aml_area_munmap(a.area, &stack, sizeof stack), -AML_EINVAL);            // foreign
    EXPECT_EQ(aml_area_munmap(a.area, static_cast<char*>(p) + 64, 64), -AML_EINVAL);  // interior
    EXPECT_EQ(aml_area_munmap(a.area, p, 1024), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(a.area, p, 1024), -AML_EINVAL);  // already unmapped

    // The area is still usable after all that.
    void* q = aml_area_mmap(a.area, 64, nullptr);
    ASSERT_NE(q, nullptr);
    EXPECT_EQ(aml_area_munmap(a.area, q, 64), AML_SUCCESS);
}

TEST(AreaMap, OutOfDeviceMemoryIsEnomem) {
    zehal::sim::SimConfig config;
    config.memory_bytes = 1u << 20;
    hal::DeviceRef dev = sim_device(config);
    for (int flags : {AML_AREA_ZE_MMAP_DEVICE_FLAGS, AML_AREA_ZE_MMAP_SHARED_FLAGS}) {
        AreaGuard a;
        ASSERT_EQ(aml_area_ze_device_create(&a.area, handle(dev), 0, 0, 64, flags), AML_SUCCESS);
        void* big = aml_area_mmap(a.area, 768u << 10, nullptr);
        ASSERT_NE(big, nullptr);
        aml_errno = AML_SUCCESS;
        EXPECT_EQ(aml_area_mmap(a.area, 512u << 10, nullptr), nullptr);
        EXPECT_EQ(aml_errno, AML_ENOMEM);
        EXPECT_EQ(aml_area_munmap(a.area, big, 768u << 10), AML_SUCCESS);
        void* again = aml_area_mmap(a.area, 512u << 10, nullptr);  // room again
        ASSERT_NE(again, nullptr);
        EXPECT_EQ(aml_area_munmap(a.area, again, 512u << 10), AML_SUCCESS);
    }
}

TEST(AreaMap, InjectedAllocationFailureIsReported) {
    zehal::sim::SimConfig config;
    config.fail_allocation_after = 1;
    hal::DeviceRef dev = sim_device(config);
    AreaGuard a;
    ASSERT_EQ(aml_area_ze_device_create(&a.area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    void* first = aml_area_mmap(a.area, 64, nullptr);
    ASSERT_NE(first, nullptr);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_area_mmap(a.area, 64, nullptr), nullptr);
    EXPECT_NE(aml_errno, AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(a.area, first, 64), AML_SUCCESS);
}

TEST(AreaMap, LostDeviceIsFailure) {
    hal::DeviceRef dev = sim_device();
    AreaGuard a;
    ASSERT_EQ(aml_area_ze_device_create(&a.area, handle(dev), 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    void* p = aml_area_mmap(a.area, 64, nullptr);
    ASSERT_NE(p, nullptr);
    ASSERT_EQ(dev->lose(), ZE_RESULT_SUCCESS);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_area_mmap(a.area, 64, nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_FAILURE);
    EXPECT_EQ(aml_area_munmap(a.area, p, 64), -AML_FAILURE);
}

TEST(AreaFprintf, DescribesEveryAreaAndNeverCrashes) {
    hal::DeviceRef dev = sim_device();
    AreaGuard d, h;
    ASSERT_EQ(aml_area_ze_device_create(&d.area, handle(dev), 0, 1, 4096, AML_AREA_ZE_MMAP_DEVICE_FLAGS), AML_SUCCESS);
    ASSERT_EQ(aml_area_ze_host_create(&h.area, 0, 128), AML_SUCCESS);
    char text[1024] = {0};
    FILE* f = fmemopen(text, sizeof text - 1, "w");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(aml_area_fprintf(f, "dev: ", d.area), AML_SUCCESS);
    EXPECT_EQ(aml_area_fprintf(f, nullptr, h.area), AML_SUCCESS);
    aml_area bare{nullptr, nullptr};  // no ops: described by its address only
    EXPECT_EQ(aml_area_fprintf(f, "bare: ", &bare), AML_SUCCESS);
    std::fclose(f);
    EXPECT_NE(std::strstr(text, "dev: kind: device"), nullptr);
    EXPECT_NE(std::strstr(text, "dev: alignment: 4096"), nullptr);
    EXPECT_NE(std::strstr(text, "dev: backend: sim"), nullptr);
    EXPECT_NE(std::strstr(text, "kind: host"), nullptr);
    EXPECT_NE(std::strstr(text, "alignment: 128"), nullptr);
    EXPECT_NE(std::strstr(text, "bare: area:"), nullptr);
    EXPECT_EQ(aml_area_fprintf(nullptr, "", d.area), -AML_EINVAL);
    EXPECT_EQ(aml_area_fprintf(stdout, "", nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_area_ze_fprintf(nullptr, stdout, ""), -AML_EINVAL);
}

TEST(AreaDefaults, DeviceAndHostAreasOfTheDefaultBackend) {
    ASSERT_EQ(aml_init(nullptr, nullptr), AML_SUCCESS);
    aml_area* d = aml_area_ze_device;
    aml_area* h = aml_area_ze_host;
    ASSERT_NE(d, nullptr);
    ASSERT_NE(h, nullptr);
    EXPECT_EQ(d->ops, &aml_area_ze_ops_device);
    EXPECT_EQ(h->ops, &aml_area_ze_ops_host);
    void* dp = aml_area_mmap(d, 100, nullptr);
    void* hp = aml_area_mmap(h, 100, nullptr);
    ASSERT_NE(dp, nullptr);
    ASSERT_NE(hp, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(dp) % 64, 0u);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(hp) % 64, 0u);
    char text[512] = {0};
    FILE* f = fmemopen(text, sizeof text - 1, "w");
    ASSERT_NE(f, nullptr);
    aml_area_fprintf(f, "", d);
    std::fclose(f);
    EXPECT_NE(std::strstr(text, "alignment: 64"), nullptr);
    EXPECT_NE(std::strstr(text, "flags: 0x1"), nullptr);
    EXPECT_EQ(aml_area_munmap(d, dp, 100), AML_SUCCESS);
    EXPECT_EQ(aml_area_munmap(h, hp, 100), AML_SUCCESS);
    // Finalize releases them; the next use makes them again.
    EXPECT_EQ(aml_finalize(), AML_SUCCESS);
    ASSERT_NE(aml_area_ze_device, nullptr);
    EXPECT_EQ(aml_finalize(), AML_SUCCESS);
}

TEST(AreaCpp, MapUnmapCloseAndImportRules) {
    hal::DeviceRef dev = sim_device();
    std::shared_ptr<Area> area;
    EXPECT_EQ(Area::create(nullptr, hal::MemoryKind::device, 0, 0, 64, &area), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(Area::create(dev, hal::MemoryKind::device, 0, 0, 12, &area), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(Area::create(dev, hal::MemoryKind::host, 1, 0, 64, &area), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(Area::create(dev, hal::MemoryKind::device, 0, 0, 64, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(Area::create(dev, hal::MemoryKind::shared, 0, 0, 256, &area), ZE_RESULT_SUCCESS);
    EXPECT_EQ(area->kind(), hal::MemoryKind::shared);
    EXPECT_EQ(area->alignment(), 256u);
    EXPECT_EQ(area->device(), dev);

    void* p = nullptr;
    EXPECT_EQ(area->map(0, &p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(p, nullptr);
    EXPECT_EQ(area->map(10, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(area->map(1000, &p), ZE_RESULT_SUCCESS);
    size_t size = 0;
    EXPECT_TRUE(area->mapped(p, &size));
    EXPECT_EQ(size, 1000u);
    EXPECT_EQ(area->mapped_count(), 1u);
    EXPECT_EQ(area->import_dma_buf(-1, 4096, &p), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);  // not a device area

    area->close();
    EXPECT_TRUE(area->closed());
    void* q = nullptr;
    EXPECT_EQ(area->map(10, &q), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(area->unmap(p), ZE_RESULT_SUCCESS);  // what was mapped can still go
    EXPECT_EQ(area->unmap(p), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(area->unmap(nullptr), ZE_RESULT_SUCCESS);

    // An area destroyed with live mappings frees them (checked by the leak sanitizer).
    std::shared_ptr<Area> leaky;
    ASSERT_EQ(Area::create(dev, hal::MemoryKind::host, 0, 0, 64, &leaky), ZE_RESULT_SUCCESS);
    ASSERT_EQ(leaky->map(4096, &q), ZE_RESULT_SUCCESS);
    leaky.reset();
    hal::PointerInfo info;
    EXPECT_EQ(dev->pointer_info(q, &info), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

}  // namespace
