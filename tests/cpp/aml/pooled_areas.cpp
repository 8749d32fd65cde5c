// Runs the AML tests with every zehal area pooled: linked with --wrap, the calls of the
// tests that create device, shared and host areas get a pooled area over the one they asked
// for (the upstream C handle goes at once; the pool keeps what it needs of it).
#include "aml/area/ze.h"
#include "aml/area/ze_pool.h"

extern "C" {

int __real_aml_area_ze_device_create(struct aml_area** area, zehal_device_t device, uint32_t ordinal,
                                     uint32_t device_flags, size_t alignment, int flags);
int __real_aml_area_ze_host_create(struct aml_area** area, uint32_t host_flags, size_t alignment);

namespace {

// Replaces the area just made in *area by a pool over it; `r` is the creation's result.
int pooled(int r, struct aml_area** area) {
    if (r != AML_SUCCESS) return r;
    struct aml_area* upstream = *area;
    r = aml_area_ze_pool_create(area, upstream, 0, 0);
    aml_area_ze_destroy(&upstream);
    return r;
}

}  // namespace

int __wrap_aml_area_ze_device_create(struct aml_area** area, zehal_device_t device, uint32_t ordinal,
                                     uint32_t device_flags, size_t alignment, int flags) {
    return pooled(__real_aml_area_ze_device_create(area, device, ordinal, device_flags, alignment, flags), area);
}

int __wrap_aml_area_ze_host_create(struct aml_area** area, uint32_t host_flags, size_t alignment) {
    return pooled(__real_aml_area_ze_host_create(area, host_flags, alignment), area);
}

}  // extern "C"
