/* zehal's AML C API: areas, layouts and DMA engines with AML's names and semantics.
 * Plain C11; every function returns AML_SUCCESS or a negative AML code (-AML_EINVAL),
 * or a pointer that is NULL on failure with aml_errno set. Implementations: areas in
 * <aml/area/ze.h>, dense layouts in <aml/layout/dense.h>, DMA engines in <aml/dma/ze.h>.
 * Devices are zehal_device_t handles from zehal_device_get() (<zehal/device.h>). */
#ifndef AML_H
#define AML_H 1

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "zehal/device.h"
#include "aml/utils/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* --- Library ------------------------------------------------------------------------- */

/* Initializes the library: probes the backends and creates the default areas and DMA
 * engine (they stay NULL when no device exists). argc and argv may be NULL; they are not
 * modified. Idempotent. Returns AML_SUCCESS. */
ZEHAL_API int aml_init(int* argc, char** argv[]);

/* Waits for the default DMA engine, then releases the default areas and engine; they are
 * created again on next use. Returns AML_SUCCESS. */
ZEHAL_API int aml_finalize(void);

/* --- Areas --------------------------------------------------------------------------- */

/* Implementation data of an area (opaque). */
struct aml_area_data;
/* Options of one mmap call (opaque; zehal's areas take none: pass NULL). */
struct aml_area_mmap_options;

/* Operations of an area implementation. */
struct aml_area_ops {
    /* Maps `size` (> 0) bytes; NULL with aml_errno set on failure. */
    void* (*mmap)(const struct aml_area_data* data, size_t size, struct aml_area_mmap_options* opts);
    /* Unmaps what mmap of the same area returned; AML_SUCCESS or a negative code. */
    int (*munmap)(const struct aml_area_data* data, void* ptr, size_t size);
    /* Describes the area on `stream`, each line starting with `prefix`. */
    int (*fprintf)(const struct aml_area_data* data, FILE* stream, const char* prefix);
};

/* An area: an ops table plus its data. */
struct aml_area {
    struct aml_area_ops* ops;   /* operations */
    struct aml_area_data* data; /* implementation data */
};

/* Maps `size` bytes from `area`. size 0: NULL with aml_errno unchanged. NULL area: NULL,
 * aml_errno = AML_EINVAL. Failure: NULL, aml_errno = the translated code (out of memory:
 * AML_ENOMEM). `opts` may be NULL. */
ZEHAL_API void* aml_area_mmap(const struct aml_area* area, size_t size, struct aml_area_mmap_options* opts);

/* Unmaps `ptr` mapped by `area`. NULL ptr or size 0: AML_SUCCESS (nothing done). NULL
 * area, or a pointer this area did not map or already unmapped: -AML_EINVAL. */
ZEHAL_API int aml_area_munmap(const struct aml_area* area, void* ptr, size_t size);

/* Describes `area` (kind, device, alignment) on `stream`, every line starting with
 * `prefix` (NULL: none). -AML_EINVAL for a NULL stream or area. */
ZEHAL_API int aml_area_fprintf(FILE* stream, const char* prefix, const struct aml_area* area);

/* --- Layouts ------------------------------------------------------------------------- */

/* Column-major: the first user dimension is contiguous (Fortran order). */
#define AML_LAYOUT_ORDER_COLUMN_MAJOR (0 << 0)
/* Row-major: the last user dimension is contiguous (C order). */
#define AML_LAYOUT_ORDER_ROW_MAJOR (1 << 0)
/* Synonyms of the two orders. */
#define AML_LAYOUT_ORDER_FORTRAN AML_LAYOUT_ORDER_COLUMN_MAJOR
#define AML_LAYOUT_ORDER_C AML_LAYOUT_ORDER_ROW_MAJOR
/* The order bit of an order value. */
#define AML_LAYOUT_ORDER(x) ((x) & (1 << 0))

/* Implementation data of a layout (opaque). */
struct aml_layout_data;
struct aml_layout;

/* Operations of a layout implementation; coordinates and dimensions in user order. */
struct aml_layout_ops {
    /* Address of the element at `coords`; NULL with aml_errno = AML_EDOM out of bounds. */
    void* (*deref)(const struct aml_layout_data* data, const size_t* coords);
    /* First byte of the described memory. */
    void* (*rawptr)(const struct aml_layout_data* data);
    /* AML_LAYOUT_ORDER_COLUMN_MAJOR or AML_LAYOUT_ORDER_ROW_MAJOR. */
    int (*order)(const struct aml_layout_data* data);
    /* Writes the ndims() dimensions into `dims`. */
    int (*dims)(const struct aml_layout_data* data, size_t* dims);
    /* Number of dimensions. */
    size_t (*ndims)(const struct aml_layout_data* data);
    /* Bytes of one element. */
    size_t (*element_size)(const struct aml_layout_data* data);
    /* Describes the layout on `stream`. */
    int (*fprintf)(const struct aml_layout_data* data, FILE* stream, const char* prefix);
    /* Frees the layout (the struct aml_layout included). */
    void (*destroy)(struct aml_layout* layout);
};

/* A layout: an ops table plus its data. */
struct aml_layout {
    struct aml_layout_ops* ops;   /* operations */
    struct aml_layout_data* data; /* implementation data */
};

/* Address of the element at `coords` (one per dimension, user order). NULL layout or
 * coords: NULL, aml_errno = AML_EINVAL; a coordinate out of its dimension: NULL,
 * aml_errno = AML_EDOM. */
ZEHAL_API void* aml_layout_deref(const struct aml_layout* layout, const size_t* coords);
/* The same as aml_layout_deref (which already checks bounds). */
ZEHAL_API void* aml_layout_deref_safe(const struct aml_layout* layout, const size_t* coords);
/* First byte of the layout's memory; NULL with aml_errno = AML_EINVAL for a NULL layout. */
ZEHAL_API void* aml_layout_rawptr(const struct aml_layout* layout);
/* The layout's order (AML_LAYOUT_ORDER_*); -AML_EINVAL for a NULL layout. */
ZEHAL_API int aml_layout_order(const struct aml_layout* layout);
/* Writes the dimensions (user order) into `dims` (aml_layout_ndims() entries);
 * -AML_EINVAL for a NULL layout or dims. */
ZEHAL_API int aml_layout_dims(const struct aml_layout* layout, size_t* dims);
/* Number of dimensions; 0 with aml_errno = AML_EINVAL for a NULL layout. */
ZEHAL_API size_t aml_layout_ndims(const struct aml_layout* layout);
/* Bytes of one element; 0 with aml_errno = AML_EINVAL for a NULL layout. */
ZEHAL_API size_t aml_layout_element_size(const struct aml_layout* layout);
/* Describes the layout on `stream`; -AML_EINVAL for a NULL stream or layout. */
ZEHAL_API int aml_layout_fprintf(FILE* stream, const char* prefix, const struct aml_layout* layout);
/* Frees *layout (not the memory it describes) and sets it to NULL; NULL is ignored. */
ZEHAL_API void aml_layout_destroy(struct aml_layout** layout);

/* --- DMA ----------------------------------------------------------------------------- */

/* A request of a DMA engine (opaque; see struct aml_dma_ze_request). */
struct aml_dma_request;
/* Implementation data of a DMA engine (opaque). */
struct aml_dma_data;

/* An operator: submits the movement of `src` into `dst`; `arg` is the engine's argument
 * block (struct aml_dma_ze_copy_args for zehal engines). Returns an AML code. */
typedef int (*aml_dma_operator)(struct aml_layout* dst, const struct aml_layout* src, void* arg);

/* Operations of a DMA engine implementation. */
struct aml_dma_ops {
    /* Submits a copy; *req receives the request, or req NULL: fire-and-forget. */
    int (*create_request)(struct aml_dma_data* dma, struct aml_dma_request** req, struct aml_layout* dst,
                          struct aml_layout* src, aml_dma_operator op, void* op_arg);
    /* Cancels (or waits for) *req, frees it and sets it to NULL. */
    int (*destroy_request)(struct aml_dma_data* dma, struct aml_dma_request** req);
    /* Waits for *req, frees it and sets it to NULL; returns the copy's result. */
    int (*wait_request)(struct aml_dma_data* dma, struct aml_dma_request** req);
    /* Waits for every copy submitted before it. */
    int (*barrier)(struct aml_dma_data* dma);
    /* Describes the engine on `stream`. */
    int (*fprintf)(const struct aml_dma_data* dma, FILE* stream, const char* prefix);
};

/* A DMA engine: an ops table plus its data. */
struct aml_dma {
    struct aml_dma_ops* ops;   /* operations */
    struct aml_dma_data* data; /* implementation data */
};

/* Copies `src` into `dst` with operator `op` (NULL: the engine's default) and waits.
 * -AML_EINVAL for a NULL dma, dst or src; else the operator's or the copy's result. */
ZEHAL_API int aml_dma_copy_custom(struct aml_dma* dma, struct aml_layout* dst, struct aml_layout* src,
                                  aml_dma_operator op, void* op_arg);

/* Submits the copy and returns at once; *req receives a request for aml_dma_wait or
 * aml_dma_cancel. req NULL: fire-and-forget (only a barrier waits for it; zehal frees
 * it). -AML_EINVAL for a NULL dma, dst or src; *req is untouched on failure. */
ZEHAL_API int aml_dma_async_copy_custom(struct aml_dma* dma, struct aml_dma_request** req, struct aml_layout* dst,
                                        struct aml_layout* src, aml_dma_operator op, void* op_arg);

/* Copies with the default operator. */
#define aml_dma_copy(dma, d, s) aml_dma_copy_custom(dma, d, s, NULL, NULL)
/* Submits a copy with the default operator. */
#define aml_dma_async_copy(dma, r, d, s) aml_dma_async_copy_custom(dma, r, d, s, NULL, NULL)

/* Waits until *req is done, frees it, sets *req = NULL and returns the copy's result.
 * -AML_EINVAL for a NULL dma, req or *req, or a request of another engine. */
ZEHAL_API int aml_dma_wait(struct aml_dma* dma, struct aml_dma_request** req);

/* Cancels *req: removed from the queue when not yet started, else waited for; freed
 * either way and *req set to NULL. -AML_EINVAL as aml_dma_wait. */
ZEHAL_API int aml_dma_cancel(struct aml_dma* dma, struct aml_dma_request** req);

/* Returns once every copy submitted before it completed (fire-and-forget ones too);
 * held requests stay valid and aml_dma_wait on them returns at once. */
ZEHAL_API int aml_dma_barrier(struct aml_dma* dma);

/* Describes the engine on `stream`; -AML_EINVAL for a NULL stream or dma. */
ZEHAL_API int aml_dma_fprintf(FILE* stream, const char* prefix, const struct aml_dma* dma);

#ifdef __cplusplus
}
#endif

#endif
