// C API: generic aml_area_* functions and zehal areas (aml/area/ze.h).
#include "common/api_call_log.hpp"
#include "aml/area/ze.h"
#include "aml/area/ze_pool.h"
#include "aml/capi_handles.hpp"
#include "hal/types.hpp"

using zehal::aml::Area;
using zehal::aml::thread_errno;
using zehal::aml::to_aml;
using zehal::aml::capi::area_of;
using zehal::aml::capi::AreaHandle;
using zehal::aml::capi::guarded;
using zehal::hal::MemoryKind;

namespace {

// Maps `size` bytes of `kind` from the area of `data`; NULL with aml_errno set on failure
// (unchanged for size 0).
void* map_kind(const aml_area_data* data, size_t size, MemoryKind kind) {
    if (size == 0) return nullptr;
    Area* area = area_of(data);
    if (!area || area->kind() != kind) {
        thread_errno() = AML_EINVAL;
        return nullptr;
    }
    void* ptr = nullptr;
    const int r = guarded([&] { return to_aml(area->map(size, &ptr)); });
    if (r != AML_SUCCESS) {
        thread_errno() = -r;
        return nullptr;
    }
    return ptr;
}

// Wraps `impl` in a C handle with the ops of its kind.
int make_handle(std::shared_ptr<Area> impl, aml_area** out) {
    auto* h = new AreaHandle();
    switch (impl->kind()) {
        case MemoryKind::device:
            h->ops = &aml_area_ze_ops_device;
            break;
        case MemoryKind::shared:
            h->ops = &aml_area_ze_ops_shared;
            break;
        case MemoryKind::host:
            h->ops = &aml_area_ze_ops_host;
            break;
    }
    h->data = reinterpret_cast<aml_area_data*>(impl.get());
    h->impl = std::move(impl);
    *out = h;
    return AML_SUCCESS;
}

// The zehal area behind a C area: null for NULL or a foreign area (ops not zehal's).
Area* zehal_area(const struct aml_area* area) {
    if (!area || !area->ops || !area->data) return nullptr;
    if (area->ops != &aml_area_ze_ops_device && area->ops != &aml_area_ze_ops_shared &&
        area->ops != &aml_area_ze_ops_host)
        return nullptr;
    return area_of(area->data);
}

}  // namespace

extern "C" {

struct aml_area_ops aml_area_ze_ops_device = {aml_area_ze_mmap_device, aml_area_ze_munmap, aml_area_ze_fprintf};
struct aml_area_ops aml_area_ze_ops_shared = {aml_area_ze_mmap_shared, aml_area_ze_munmap, aml_area_ze_fprintf};
struct aml_area_ops aml_area_ze_ops_host = {aml_area_ze_mmap_host, aml_area_ze_munmap, aml_area_ze_fprintf};

int aml_area_ze_device_create(struct aml_area** area, zehal_device_t device, uint32_t ordinal, uint32_t device_flags,
                              size_t alignment, int flags) {
    ZEHAL_TIMED_API_CALL();
    if (!area || !device) return -AML_EINVAL;
    MemoryKind kind;
    if (flags == AML_AREA_ZE_MMAP_DEVICE_FLAGS)
        kind = MemoryKind::device;
    else if (flags == AML_AREA_ZE_MMAP_SHARED_FLAGS)
        kind = MemoryKind::shared;
    else
        return -AML_EINVAL;
    return guarded([&] {
        std::shared_ptr<Area> impl;
        const ze_result_t r = Area::create(zehal::aml::capi::device_ref(device), kind, ordinal, device_flags, alignment,
                                           &impl);
        if (r != ZE_RESULT_SUCCESS) return to_aml(r);
        return make_handle(std::move(impl), area);
    });
}

int aml_area_ze_host_create(struct aml_area** area, uint32_t host_flags, size_t alignment) {
    ZEHAL_TIMED_API_CALL();
    if (!area) return -AML_EINVAL;
    return guarded([&] {
        std::shared_ptr<Area> impl;
        if (ze_result_t r = Area::create_host(host_flags, alignment, &impl); r != ZE_RESULT_SUCCESS) return to_aml(r);
        return make_handle(std::move(impl), area);
    });
}

void aml_area_ze_destroy(struct aml_area** area) {
    ZEHAL_TIMED_API_CALL();
    if (!area || !*area) return;
    delete static_cast<AreaHandle*>(*area);
    *area = nullptr;
}

void* aml_area_ze_mmap_device(const struct aml_area_data* area_data, size_t size,
                              struct aml_area_mmap_options* /*options*/) {
    ZEHAL_TIMED_API_CALL();
    return map_kind(area_data, size, MemoryKind::device);
}

void* aml_area_ze_mmap_shared(const struct aml_area_data* area_data, size_t size,
                              struct aml_area_mmap_options* /*options*/) {
    ZEHAL_TIMED_API_CALL();
    return map_kind(area_data, size, MemoryKind::shared);
}

void* aml_area_ze_mmap_host(const struct aml_area_data* area_data, size_t size,
                            struct aml_area_mmap_options* /*options*/) {
    ZEHAL_TIMED_API_CALL();
    return map_kind(area_data, size, MemoryKind::host);
}

int aml_area_ze_munmap(const struct aml_area_data* area_data, void* ptr, const size_t size) {
    ZEHAL_TIMED_API_CALL();
    if (!ptr || size == 0) return AML_SUCCESS;
    Area* area = area_of(area_data);
    if (!area) return -AML_EINVAL;
    // A pool finds the block by its size (the fast path); other areas by the pointer alone.
    return guarded([&] { return to_aml(area->pool() ? area->unmap(ptr, size) : area->unmap(ptr)); });
}

int aml_area_ze_fprintf(const struct aml_area_data* area_data, FILE* stream, const char* prefix) {
    ZEHAL_TIMED_API_CALL();
    const Area* area = area_of(area_data);
    if (!area || !stream) return -AML_EINVAL;
    area->describe(stream, prefix);
    return AML_SUCCESS;
}

void* aml_area_mmap(const struct aml_area* area, size_t size, struct aml_area_mmap_options* opts) {
    ZEHAL_TIMED_API_CALL();
    if (size == 0) return nullptr;
    if (!area || !area->ops || !area->ops->mmap) {
        thread_errno() = AML_EINVAL;
        return nullptr;
    }
    return area->ops->mmap(area->data, size, opts);
}

int aml_area_munmap(const struct aml_area* area, void* ptr, size_t size) {
    ZEHAL_TIMED_API_CALL();
    if (!ptr || size == 0) return AML_SUCCESS;
    if (!area || !area->ops || !area->ops->munmap) return -AML_EINVAL;
    return area->ops->munmap(area->data, ptr, size);
}

int aml_area_fprintf(FILE* stream, const char* prefix, const struct aml_area* area) {
    ZEHAL_TIMED_API_CALL();
    if (!stream || !area) return -AML_EINVAL;
    const char* p = prefix ? prefix : "";
    if (!area->ops || !area->ops->fprintf || !area->data) {
        std::fprintf(stream, "%sarea: %p\n", p, static_cast<const void*>(area));
        return AML_SUCCESS;
    }
    return area->ops->fprintf(area->data, stream, p);
}

int aml_area_ze_pool_create(struct aml_area** area, struct aml_area* upstream, size_t initial_bytes,
                            size_t maximum_bytes) {
    ZEHAL_TIMED_API_CALL();
    if (!area) return -AML_EINVAL;
    Area* up = zehal_area(upstream);
    if (!up) return -AML_EINVAL;
    return guarded([&] {
        std::shared_ptr<Area> impl;
        const ze_result_t r = Area::create_pool(static_cast<AreaHandle*>(upstream)->impl, initial_bytes, maximum_bytes,
                                                &impl);
        if (r != ZE_RESULT_SUCCESS) return to_aml(r);
        return make_handle(std::move(impl), area);
    });
}

void aml_area_ze_pool_destroy(struct aml_area** area) {
    ZEHAL_TIMED_API_CALL();
    if (!area || !*area) return;
    Area* a = zehal_area(*area);
    if (!a || !a->pool()) {
        thread_errno() = AML_EINVAL;
        return;
    }
    if (a->pool()->stats().allocations != 0) {
        thread_errno() = AML_EBUSY;
        return;
    }
    delete static_cast<AreaHandle*>(*area);
    *area = nullptr;
}

int aml_area_ze_pool_stats(const struct aml_area* area, struct aml_area_ze_pool_stats* stats) {
    ZEHAL_TIMED_API_CALL();
    const Area* a = zehal_area(area);
    if (!a || !a->pool() || !stats) return -AML_EINVAL;
    const zehal::aml::PoolStats s = a->pool()->stats();
    *stats = {s.bytes_in_use,      s.peak_bytes_in_use,    s.bytes_reserved, s.allocations,
              s.total_allocations, s.upstream_allocations, s.cache_hits};
    return AML_SUCCESS;
}

int aml_area_ze_pool_trim(struct aml_area* area) {
    ZEHAL_TIMED_API_CALL();
    Area* a = zehal_area(area);
    if (!a || !a->pool()) return -AML_EINVAL;
    return guarded([&] { return to_aml(a->pool()->trim()); });
}

}  // extern "C"
