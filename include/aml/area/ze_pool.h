/* Pooled areas (contract §10): an area that serves aml_area_mmap from memory it keeps,
 * taken from an upstream zehal area in large chunks, so that mapping costs no driver call.
 * Kind, device and alignment are the upstream's; layouts, DMA engines and aml_area_* work
 * on a pool's memory as on the upstream's. Thread-safe. */
#ifndef AML_AREA_ZE_POOL_H
#define AML_AREA_ZE_POOL_H 1

#include <stddef.h>
#include <stdint.h>

#include "aml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a pool holds and has done, every field of one instant; all exact but the peak when
 * threads contend (see peak_bytes_in_use). */
struct aml_area_ze_pool_stats {
    uint64_t bytes_in_use;         /* bytes asked for by the live mappings */
    uint64_t peak_bytes_in_use;    /* the most bytes_in_use has been; when threads keep taking
                                      memory at the same instants, an upper bound: at most the
                                      sum of each thread's own highest use */
    uint64_t bytes_reserved;       /* bytes held from the upstream area */
    uint64_t allocations;          /* live mappings */
    uint64_t total_allocations;    /* mappings ever made */
    uint64_t upstream_allocations; /* chunks ever taken from the upstream area */
    uint64_t cache_hits;           /* mappings served from memory freed earlier */
};

/* Creates a pooled area.
 * area           [out] the pool (destroy with aml_area_ze_pool_destroy)
 * upstream       [in] a zehal area (aml_area_ze_device_create, _host_create, or a pool); it
 *                must outlive the pool
 * initial_bytes  [in] bytes taken from upstream at once (0: none until the first mmap)
 * maximum_bytes  [in] the most the pool ever holds from upstream (0: no limit); an mmap
 *                beyond it fails with AML_ENOMEM and changes nothing
 * Returns AML_SUCCESS; -AML_EINVAL for a NULL area or upstream, an upstream that is not a
 * zehal area, or initial_bytes above maximum_bytes; -AML_ENOMEM when the initial chunk
 * cannot be had. */
ZEHAL_API int aml_area_ze_pool_create(struct aml_area** area, struct aml_area* upstream, size_t initial_bytes,
                                      size_t maximum_bytes);

/* Destroys a pool with no live mapping, giving its memory back to upstream, and sets
 * *area to NULL. A pool with live mappings is not destroyed: aml_errno becomes AML_EBUSY
 * and *area is left as it was.
 * area  [in,out] the pool */
ZEHAL_API void aml_area_ze_pool_destroy(struct aml_area** area);

/* Statistics of a pool.
 * area   [in] the pool
 * stats  [out] its statistics
 * Returns AML_SUCCESS; -AML_EINVAL for NULL arguments or an area that is not a pool. */
ZEHAL_API int aml_area_ze_pool_stats(const struct aml_area* area, struct aml_area_ze_pool_stats* stats);

/* Gives back to upstream every chunk nothing is mapped from.
 * area  [in] the pool
 * Returns AML_SUCCESS; -AML_EINVAL for NULL or an area that is not a pool. */
ZEHAL_API int aml_area_ze_pool_trim(struct aml_area* area);

#ifdef __cplusplus
}
#endif

#endif
