/* DMA engines over zehal devices (AML's aml_dma_ze): one asynchronous immediate queue on
 * one engine of a device; requests, waits, cancels, barriers, fire-and-forget copies. */
#ifndef AML_DMA_ZE_H
#define AML_DMA_ZE_H

#include <stddef.h>
#include <stdint.h>

#include "aml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Request flags: the copy has not completed yet. */
#define AML_DMA_ZE_REQUEST_FLAGS_PENDING 0x0
/* Request flags: the copy completed (or was cancelled). */
#define AML_DMA_ZE_REQUEST_FLAGS_DONE 0x1

/* What a request handle of a zehal engine points to: cast a struct aml_dma_request* to it
 * to read the flags. */
struct aml_dma_ze_request {
    /* AML_DMA_ZE_REQUEST_FLAGS_*, kept current by zehal: set to DONE within about half a
     * millisecond of the copy's completion (the engine watches the requests it hands out),
     * and at once by aml_dma_barrier. Written by another thread: read it with an atomic
     * load (__atomic_load_n) when polling. */
    int flags;
};

/* Data of a zehal engine (opaque). */
struct aml_dma_ze_data;

/* The argument block the engine passes to an operator as `arg`; valid during the call. */
struct aml_dma_ze_copy_args {
    struct aml_dma_ze_data* ze_data;   /* the engine */
    struct aml_dma_ze_request* ze_req; /* the request; NULL for fire-and-forget */
    void* arg;                         /* the op_arg given by the caller */
};

/* Ops of zehal engines. */
ZEHAL_API extern struct aml_dma_ops aml_dma_ze_ops;

/* Where the default engine lives; created on first use (or by aml_init). */
ZEHAL_API struct aml_dma** aml_dma_ze_default_location(void);
/* Default engine: copy engine 0 (ordinal 1, index 0) of the first device of the default
 * backend (compute engine 0 on a device without copy engines); NULL when no device. */
#define aml_dma_ze_default (*aml_dma_ze_default_location())

/* Creates an engine.
 * dma: receives the engine (free with aml_dma_ze_destroy).
 * device: the device (not NULL).
 * ordinal: engine group, 1 (copy engines; the usual choice) or 0 (compute engines).
 * index: engine within the group (0 is the usual choice).
 * Returns AML_SUCCESS; -AML_EINVAL for a NULL dma or device, or an ordinal or index outside
 * the device's engines; -AML_FAILURE for a lost device. */
ZEHAL_API int aml_dma_ze_create(struct aml_dma** dma, zehal_device_t device, uint32_t ordinal, uint32_t index);

struct zehal_event; /* zehal/events.h */

/* Copies `size` bytes from `src` to `dst` on a zehal engine, signalling `signal` with the
 * copy itself (so its kernel timestamps measure the copy).
 * dma     [in] a zehal engine (aml_dma_ze_create)
 * req     [out][optional] the request (wait with aml_dma_wait); NULL: fire-and-forget
 * dst     [in] destination (device or shared memory of the engine's device, host memory
 *              of any area of any backend, or system memory: malloc'd, the stack, kept
 *              alive by the caller until the copy completes)
 * src     [in] source
 * size    [in] bytes, > 0
 * signal  [in][optional] an event of the engine's device (zehal/events.h), or NULL
 * Returns AML_SUCCESS; -AML_EINVAL for a NULL or foreign dma, NULL dst or src, size 0, a
 * destroyed event or memory the device cannot copy (another device's, pages not mapped);
 * -AML_EDOM for overlapping regions. */
ZEHAL_API int aml_dma_ze_copy_signal(struct aml_dma* dma, struct aml_dma_request** req, void* dst, const void* src,
                                     size_t size, struct zehal_event* signal);

/* Waits for everything submitted (a barrier), frees *dma (and the requests it still holds)
 * and sets *dma = NULL. -AML_EINVAL for a NULL dma; *dma NULL is ignored. Returns the
 * barrier's result. */
ZEHAL_API int aml_dma_ze_destroy(struct aml_dma** dma);

/* Ops of the engine, also reachable through aml_dma_ze_ops. */
ZEHAL_API int aml_dma_ze_request_create(struct aml_dma_data* data, struct aml_dma_request** req, struct aml_layout* dst,
                                        struct aml_layout* src, aml_dma_operator op, void* op_arg);
ZEHAL_API int aml_dma_ze_request_wait(struct aml_dma_data* data, struct aml_dma_request** req);
ZEHAL_API int aml_dma_ze_request_destroy(struct aml_dma_data* data, struct aml_dma_request** req);
ZEHAL_API int aml_dma_ze_barrier(struct aml_dma_data* data);
ZEHAL_API int aml_dma_ze_fprintf(const struct aml_dma_data* data, FILE* stream, const char* prefix);

/* Operator (the default): copies element_size x dims bytes between the raw pointers of two
 * dense one-dimensional layouts of unit stride. -AML_EINVAL for a NULL argument, a layout
 * that is not such, or a destination smaller than the source; -AML_EDOM for overlapping
 * ranges. `arg` is the engine's struct aml_dma_ze_copy_args. */
ZEHAL_API int aml_dma_ze_copy_1D(struct aml_layout* dst, const struct aml_layout* src, void* arg);

/* Operator: copies between raw pointers cast to layouts; the byte count, cast to void*, is
 * the op_arg of the call (args->arg). -AML_EINVAL for NULL pointers or 0 bytes; -AML_EDOM
 * for overlapping ranges. */
ZEHAL_API int aml_dma_ze_memcpy_op(struct aml_layout* dst, const struct aml_layout* src, void* arg);

#ifdef __cplusplus
}
#endif

#endif
