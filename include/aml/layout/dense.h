/* Dense layouts: a multi-dimensional array over a contiguous address range, with a
 * stride (elements between used elements) and a pitch (allocated elements) per dimension. */
#ifndef AML_LAYOUT_DENSE_H
#define AML_LAYOUT_DENSE_H

#include <stddef.h>

#include "aml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Ops of dense layouts (both orders). */
ZEHAL_API extern struct aml_layout_ops aml_layout_dense_ops;

/* Creates a dense layout over `ptr` (not owned).
 * layout: receives the layout (free with aml_layout_destroy).
 * ptr: first byte of the array.
 * order: AML_LAYOUT_ORDER_COLUMN_MAJOR (first dimension contiguous) or
 *        AML_LAYOUT_ORDER_ROW_MAJOR (last dimension contiguous).
 * element_size: bytes of one element (> 0).
 * ndims: number of dimensions (> 0).
 * dims: elements along each dimension (each > 0), user order.
 * stride: elements between two used elements of each dimension; NULL: all 1.
 * pitch: elements allocated along each dimension (each >= its dim); NULL: dims.
 * Storage is column-major inside: a row-major layout keeps its dimensions reversed.
 * Returns AML_SUCCESS; -AML_EINVAL for a NULL layout, ptr or dims, a zero element size,
 * ndims or dim, a pitch smaller than its dim, an order other than the two, or a size that
 * overflows; -AML_ENOMEM when out of memory. */
ZEHAL_API int aml_layout_dense_create(struct aml_layout** layout, void* ptr, const int order, const size_t element_size,
                                      const size_t ndims, const size_t* dims, const size_t* stride,
                                      const size_t* pitch);

#ifdef __cplusplus
}
#endif

#endif
