/* A C tool on the AML C API: host -> device -> host round trip of 1 MiB through the
 * default DMA engine (a 1-D layout copy and a memcpy_op copy), then 128 fire-and-forget
 * copies and a barrier; every byte checked. Prints one line per step; exit status 0 on
 * success. The backend is the default one (ZEHAL_BACKEND chooses). */
#include <aml.h>
#include <aml/area/ze.h>
#include <aml/dma/ze.h>
#include <aml/layout/dense.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BYTES ((size_t)1 << 20)
#define CHUNKS 128

static int fail(const char* what, int code) {
    fprintf(stderr, "aml_roundtrip: %s: %s\n", what, aml_strerror(code < 0 ? -code : code));
    return 1;
}

int main(void) {
    if (aml_init(NULL, NULL) != AML_SUCCESS) return fail("aml_init", AML_FAILURE);
    struct aml_area* host = aml_area_ze_host;
    struct aml_area* device = aml_area_ze_device;
    struct aml_dma* dma = aml_dma_ze_default;
    if (!host || !device || !dma) return fail("default area or engine", AML_FAILURE);
    aml_area_fprintf(stdout, "device area: ", device);

    unsigned char* src = aml_area_mmap(host, BYTES, NULL);
    unsigned char* back = aml_area_mmap(host, BYTES, NULL);
    void* dev = aml_area_mmap(device, BYTES, NULL);
    if (!src || !back || !dev) return fail("aml_area_mmap", aml_errno);
    for (size_t i = 0; i < BYTES; ++i) src[i] = (unsigned char)(i * 7 + 3);
    memset(back, 0, BYTES);

    /* host -> device with dense 1-D layouts and the default operator (copy_1D). */
    size_t dims[1] = {BYTES / sizeof(uint32_t)};
    struct aml_layout *lsrc = NULL, *ldev = NULL;
    int err = aml_layout_dense_create(&lsrc, src, AML_LAYOUT_ORDER_C, sizeof(uint32_t), 1, dims, NULL, NULL);
    if (err != AML_SUCCESS) return fail("aml_layout_dense_create", err);
    err = aml_layout_dense_create(&ldev, dev, AML_LAYOUT_ORDER_C, sizeof(uint32_t), 1, dims, NULL, NULL);
    if (err != AML_SUCCESS) return fail("aml_layout_dense_create", err);
    err = aml_dma_copy_custom(dma, ldev, lsrc, NULL, NULL);
    if (err != AML_SUCCESS) return fail("aml_dma_copy_custom (copy_1D)", err);

    /* device -> host with memcpy_op: raw pointers cast to layouts, the size as op_arg. */
    err = aml_dma_copy_custom(dma, (struct aml_layout*)back, (struct aml_layout*)dev, aml_dma_ze_memcpy_op,
                              (void*)BYTES);
    if (err != AML_SUCCESS) return fail("aml_dma_copy_custom (memcpy_op)", err);
    if (memcmp(src, back, BYTES) != 0) return fail("round trip: data differ", AML_FAILURE);
    printf("round trip: %zu bytes ok\n", (size_t)BYTES);

    /* 128 fire-and-forget copies device -> host, then one barrier. */
    memset(back, 0, BYTES);
    const size_t chunk = BYTES / CHUNKS;
    for (size_t i = 0; i < CHUNKS; ++i) {
        err = aml_dma_async_copy_custom(dma, NULL, (struct aml_layout*)(back + i * chunk),
                                        (struct aml_layout*)((unsigned char*)dev + i * chunk), aml_dma_ze_memcpy_op,
                                        (void*)chunk);
        if (err != AML_SUCCESS) return fail("aml_dma_async_copy_custom", err);
    }
    err = aml_dma_barrier(dma);
    if (err != AML_SUCCESS) return fail("aml_dma_barrier", err);
    if (memcmp(src, back, BYTES) != 0) return fail("fire-and-forget: data differ", AML_FAILURE);
    printf("fire-and-forget: %d copies ok\n", CHUNKS);

    aml_layout_destroy(&lsrc);
    aml_layout_destroy(&ldev);
    aml_area_munmap(device, dev, BYTES);
    aml_area_munmap(host, back, BYTES);
    aml_area_munmap(host, src, BYTES);
    aml_finalize();
    printf("aml_roundtrip: ok\n");
    return 0;
}
