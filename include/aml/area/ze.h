/* Areas over zehal devices: device, shared and host memory (AML's aml_area_ze).
 * A zehal_device_t (from zehal_device_get) stands where AML takes a ze_device_handle_t. */
#ifndef AML_AREA_ZE_H
#define AML_AREA_ZE_H

#include <stddef.h>
#include <stdint.h>

#include "aml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* aml_area_ze_device_create flags: device memory (not host-accessible). */
#define AML_AREA_ZE_MMAP_DEVICE_FLAGS (1 << 0)
/* aml_area_ze_device_create flags: shared memory (one pointer on host and device). */
#define AML_AREA_ZE_MMAP_SHARED_FLAGS (1 << 1)

/* Level Zero's "cached" allocation bias (ZE_DEVICE/HOST_MEM_ALLOC_FLAG_BIAS_CACHED), the
 * flags of the default areas. */
#define AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED (1u << 0)

/* Data of a zehal area (opaque). */
struct aml_area_ze_data;

/* Ops of device, shared and host areas. */
ZEHAL_API extern struct aml_area_ops aml_area_ze_ops_device;
ZEHAL_API extern struct aml_area_ops aml_area_ze_ops_shared;
ZEHAL_API extern struct aml_area_ops aml_area_ze_ops_host;

/* Where the default areas live; created on first use (or by aml_init). */
ZEHAL_API struct aml_area** aml_area_ze_device_location(void);
ZEHAL_API struct aml_area** aml_area_ze_host_location(void);

/* Default device area: first device of the default backend, alignment 64, cached bias;
 * NULL when no device exists. */
#define aml_area_ze_device (*aml_area_ze_device_location())
/* Default host area: host memory of the default backend, alignment 64, cached bias; NULL
 * when no device exists. */
#define aml_area_ze_host (*aml_area_ze_host_location())

/* Creates an area mapping memory of `device`.
 * area: receives the area (free with aml_area_ze_destroy).
 * device: the device (not NULL).
 * ordinal: the device's memory ordinal to allocate from.
 * device_flags: the backend's device allocation flags (0, or the cached bias).
 * alignment: alignment of every mapped pointer; a non-zero power of two.
 * flags: AML_AREA_ZE_MMAP_DEVICE_FLAGS or AML_AREA_ZE_MMAP_SHARED_FLAGS.
 * Returns AML_SUCCESS; -AML_EINVAL for a NULL area or device, other flags, a bad alignment
 * or ordinal; -AML_ENOMEM when out of host memory; -AML_FAILURE for a lost device. */
ZEHAL_API int aml_area_ze_device_create(struct aml_area** area, zehal_device_t device, uint32_t ordinal,
                                        uint32_t device_flags, size_t alignment, int flags);

/* Creates an area mapping host memory of the default backend, usable by every device of
 * every backend (pinned for the default backend's devices, pageable for the others).
 * area: receives the area.
 * host_flags: the backend's host allocation flags (0, or the cached bias).
 * alignment: a non-zero power of two.
 * Returns AML_SUCCESS; -AML_EINVAL for a NULL area or a bad alignment; the translated
 * registry error when no backend has a device. */
ZEHAL_API int aml_area_ze_host_create(struct aml_area** area, uint32_t host_flags, size_t alignment);

/* Unmaps what *area still maps, frees it and sets *area = NULL; NULL is ignored. */
ZEHAL_API void aml_area_ze_destroy(struct aml_area** area);

/* mmap of device areas: device memory of the area's device. NULL with aml_errno set on
 * failure (AML_EINVAL for NULL data or an area of another kind). */
ZEHAL_API void* aml_area_ze_mmap_device(const struct aml_area_data* area_data, size_t size,
                                        struct aml_area_mmap_options* options);
/* mmap of shared areas. */
ZEHAL_API void* aml_area_ze_mmap_shared(const struct aml_area_data* area_data, size_t size,
                                        struct aml_area_mmap_options* options);
/* mmap of host areas. */
ZEHAL_API void* aml_area_ze_mmap_host(const struct aml_area_data* area_data, size_t size,
                                      struct aml_area_mmap_options* options);

/* munmap of every zehal area: AML_SUCCESS; -AML_EINVAL for a pointer the area did not map
 * or already unmapped; `size` is not checked. */
ZEHAL_API int aml_area_ze_munmap(const struct aml_area_data* area_data, void* ptr, const size_t size);

/* fprintf of every zehal area: kind, backend, device, alignment, flags. */
ZEHAL_API int aml_area_ze_fprintf(const struct aml_area_data* area_data, FILE* stream, const char* prefix);

#ifdef __cplusplus
}
#endif

#endif
