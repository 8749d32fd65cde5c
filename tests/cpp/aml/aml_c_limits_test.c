/* The AML C API from C11 on a sim device with 8 MiB of memory and copies throttled to
 * 32 MiB/s (ZEHAL_SIM_* set before zehal starts): out of memory, live request flags, and
 * cancel of a queued and of an in-flight request. */
#define _POSIX_C_SOURCE 200809L

#include <aml.h>
#include <aml/area/ze.h>
#include <aml/dma/ze.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aml_c_check.h"

static int flags_of(struct aml_dma_request* req) {
    return __atomic_load_n(&((struct aml_dma_ze_request*)req)->flags, __ATOMIC_ACQUIRE);
}

static int async_copy(struct aml_dma* dma, struct aml_dma_request** req, void* dst, const void* src, size_t size) {
    return aml_dma_async_copy_custom(dma, req, (struct aml_layout*)dst, (struct aml_layout*)(uintptr_t)src,
                                     aml_dma_ze_memcpy_op, (void*)size);
}

int main(void) {
    setenv("ZEHAL_BACKEND", "sim", 1);
    setenv("ZEHAL_SIM_MEMORY_BYTES", "8388608", 1);
    setenv("ZEHAL_SIM_BANDWIDTH_BYTES_PER_S", "33554432", 1);
    CHECK_EQ(aml_init(NULL, NULL), AML_SUCCESS);
    struct aml_area* host = aml_area_ze_host;
    struct aml_area* device = aml_area_ze_device;
    struct aml_dma* dma = aml_dma_ze_default;
    CHECK(host && device && dma);
    if (!host || !device || !dma) return check_report("aml_c_limits_test");

    /* Out of device memory: ENOMEM, and the area stays usable. */
    void* most = aml_area_mmap(device, 6u << 20, NULL);
    CHECK(most != NULL);
    aml_errno = AML_SUCCESS;
    CHECK(aml_area_mmap(device, 4u << 20, NULL) == NULL);
    CHECK_EQ(aml_errno, AML_ENOMEM);
    CHECK_EQ(aml_area_munmap(device, most, 6u << 20), AML_SUCCESS);

    /* 2 MiB take ~60 ms: a second request queued behind is pending, then done by itself. */
    const size_t big = 2u << 20, small = 4096;
    unsigned char* src = aml_area_mmap(host, big + small, NULL);
    unsigned char* dst = aml_area_mmap(device, big + small, NULL);
    unsigned char* back = aml_area_mmap(host, big + small, NULL);
    CHECK(src && dst && back);
    if (!src || !dst || !back) return check_report("aml_c_limits_test");
    memset(src, 0x6B, big + small);
    struct aml_dma_request* first = NULL;
    struct aml_dma_request* second = NULL;
    CHECK_EQ(async_copy(dma, &first, dst, src, big), AML_SUCCESS);
    CHECK_EQ(async_copy(dma, &second, dst + big, src + big, small), AML_SUCCESS);
    CHECK_EQ(flags_of(second), AML_DMA_ZE_REQUEST_FLAGS_PENDING);
    while (flags_of(second) != AML_DMA_ZE_REQUEST_FLAGS_DONE) {
    }
    CHECK_EQ(flags_of(first), AML_DMA_ZE_REQUEST_FLAGS_DONE);
    CHECK_EQ(aml_dma_wait(dma, &first), AML_SUCCESS);
    CHECK_EQ(aml_dma_wait(dma, &second), AML_SUCCESS);

    /* Cancel: the queued request is removed (its copy never runs); the other one is taken
     * back or waited for; nothing is left behind. */
    memset(back, 0, big + small);
    CHECK_EQ(async_copy(dma, NULL, dst, back, big + small), AML_SUCCESS); /* zeroes dst */
    CHECK_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    CHECK_EQ(async_copy(dma, &first, dst, src, big), AML_SUCCESS);
    CHECK_EQ(async_copy(dma, &second, dst + big, src + big, small), AML_SUCCESS);
    CHECK_EQ(aml_dma_cancel(dma, &second), AML_SUCCESS);
    CHECK(second == NULL);
    CHECK_EQ(aml_dma_cancel(dma, &first), AML_SUCCESS);
    CHECK(first == NULL);
    CHECK_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    CHECK_EQ(aml_dma_copy_custom(dma, (struct aml_layout*)back, (struct aml_layout*)dst, aml_dma_ze_memcpy_op,
                                 (void*)(big + small)),
             AML_SUCCESS);
    for (size_t i = big; i < big + small; ++i) {
        if (back[i] != 0) {
            CHECK(back[i] == 0); /* the cancelled copy ran */
            break;
        }
    }
    for (size_t i = 1; i < big; ++i) {
        if (back[i] != back[0]) {
            CHECK(back[i] == back[0]); /* the other ran partly */
            break;
        }
    }

    aml_area_munmap(host, src, big + small);
    aml_area_munmap(device, dst, big + small);
    aml_area_munmap(host, back, big + small);
    CHECK_EQ(aml_finalize(), AML_SUCCESS);
    return check_report("aml_c_limits_test");
}
