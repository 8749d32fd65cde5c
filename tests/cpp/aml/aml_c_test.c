/* The AML C API from C11: errors, device handles, areas, layouts, DMA engines and requests,
 * on the default backend. */
#include <aml.h>
#include <aml/area/ze.h>
#include <aml/dma/ze.h>
#include <aml/layout/dense.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aml_c_check.h"

enum { KIND_HOST, KIND_DEVICE, KIND_SHARED, KINDS };
static const char* const kind_names[KINDS] = {"host", "device", "shared"};

static struct aml_area* areas[KINDS];
static struct aml_dma* dma;

/* Synchronous memcpy_op copy. */
static int copy_bytes(void* dst, const void* src, size_t size) {
    return aml_dma_copy_custom(dma, (struct aml_layout*)dst, (struct aml_layout*)(uintptr_t)src, aml_dma_ze_memcpy_op,
                               (void*)size);
}

static unsigned char byte_at(size_t i, unsigned seed) { return (unsigned char)(i * 131u + seed * 17u + (i >> 9)); }

static void test_errors(void) {
    CHECK(strcmp(aml_strerror(AML_SUCCESS), "Success") == 0);
    CHECK(strcmp(aml_strerror(AML_FAILURE), "Generic error") == 0);
    CHECK(strcmp(aml_strerror(AML_ENOMEM), "Not enough memory") == 0);
    CHECK(strcmp(aml_strerror(AML_EINVAL), "Invalid argument") == 0);
    CHECK(strcmp(aml_strerror(AML_EDOM), "Value out of bound") == 0);
    CHECK(strcmp(aml_strerror(AML_ENOTSUP), "Operation not supported") == 0);
    CHECK(strcmp(aml_strerror(AML_EBUSY), "Underlying resource is not available for operation") == 0);
    CHECK(strcmp(aml_strerror(AML_EPERM), "Insufficient permissions") == 0);
    CHECK(strcmp(aml_strerror(AML_ERROR_MAX), "Unknown error") == 0);
    CHECK(strcmp(aml_strerror(-1), "Unknown error") == 0);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_SUCCESS), AML_SUCCESS);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_ERROR_DEVICE_LOST), AML_FAILURE);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY), AML_ENOMEM);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_ERROR_INVALID_SIZE), AML_EINVAL);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_ERROR_OVERLAPPING_REGIONS), AML_EDOM);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT), AML_ENOTSUP);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_NOT_READY), AML_EBUSY);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS), AML_EPERM);
    CHECK_EQ(aml_errno_from_ze_result(ZE_RESULT_ERROR_UNKNOWN), AML_FAILURE);
    aml_errno = AML_EDOM;
    CHECK_EQ(aml_errno, AML_EDOM);
    aml_errno = AML_SUCCESS;
}

static void test_devices(zehal_device_t* device) {
    zehal_device_t d = NULL;
    CHECK_EQ(zehal_device_get(NULL, 0, NULL), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    CHECK_EQ(zehal_device_get("no-such-backend", 0, &d), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    CHECK_EQ(zehal_device_get("sim", 1000, &d), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    CHECK(d == NULL);
    CHECK_EQ(zehal_device_get("sim", 0, &d), ZE_RESULT_SUCCESS);
    CHECK(d != NULL);
    CHECK_EQ(zehal_device_get(NULL, 0, device), ZE_RESULT_SUCCESS);
    CHECK(*device != NULL);
}

static void test_areas(zehal_device_t device) {
    struct aml_area* a = NULL;
    CHECK_EQ(aml_area_ze_device_create(&a, device, 0, 0, 64, 0), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_device_create(&a, device, 0, 0, 64, 4), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_device_create(&a, device, 0, 0, 96, AML_AREA_ZE_MMAP_DEVICE_FLAGS), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_device_create(&a, device, 0, 0, 0, AML_AREA_ZE_MMAP_DEVICE_FLAGS), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_device_create(&a, NULL, 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_device_create(NULL, device, 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_device_create(&a, device, 1u << 20, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_host_create(&a, 0, 3), -AML_EINVAL);
    CHECK_EQ(aml_area_ze_host_create(NULL, 0, 64), -AML_EINVAL);
    CHECK(a == NULL);

    CHECK_EQ(aml_area_ze_host_create(&areas[KIND_HOST], 0, 256), AML_SUCCESS);
    CHECK_EQ(aml_area_ze_device_create(&areas[KIND_DEVICE], device, 0, 0, 256, AML_AREA_ZE_MMAP_DEVICE_FLAGS),
             AML_SUCCESS);
    CHECK_EQ(aml_area_ze_device_create(&areas[KIND_SHARED], device, 0, AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED, 256,
                                       AML_AREA_ZE_MMAP_SHARED_FLAGS),
             AML_SUCCESS);
    CHECK(areas[KIND_HOST]->ops == &aml_area_ze_ops_host);
    CHECK(areas[KIND_DEVICE]->ops == &aml_area_ze_ops_device);
    CHECK(areas[KIND_SHARED]->ops == &aml_area_ze_ops_shared);

    for (int k = 0; k < KINDS; ++k) {
        void* p = aml_area_mmap(areas[k], 1000, NULL);
        CHECK(p != NULL);
        CHECK_EQ((uintptr_t)p % 256, 0);
        int stack = 0;
        CHECK_EQ(aml_area_munmap(areas[k], &stack, sizeof stack), -AML_EINVAL);
        CHECK_EQ(aml_area_munmap(areas[k], NULL, 1000), AML_SUCCESS);
        CHECK_EQ(aml_area_munmap(areas[k], p, 0), AML_SUCCESS);
        CHECK_EQ(aml_area_munmap(areas[k], p, 1000), AML_SUCCESS);
        CHECK_EQ(aml_area_munmap(areas[k], p, 1000), -AML_EINVAL);
    }
    aml_errno = AML_EBUSY;
    CHECK(aml_area_mmap(areas[KIND_HOST], 0, NULL) == NULL);
    CHECK_EQ(aml_errno, AML_EBUSY);
    CHECK(aml_area_mmap(NULL, 16, NULL) == NULL);
    CHECK_EQ(aml_errno, AML_EINVAL);
    CHECK_EQ(aml_area_munmap(NULL, &a, 16), -AML_EINVAL);

    FILE* f = tmpfile();
    CHECK(f != NULL);
    if (f) {
        CHECK_EQ(aml_area_fprintf(f, "area: ", areas[KIND_SHARED]), AML_SUCCESS);
        CHECK_EQ(aml_area_fprintf(f, NULL, aml_area_ze_host), AML_SUCCESS);
        CHECK_EQ(aml_area_fprintf(f, "", NULL), -AML_EINVAL);
        char text[1024] = {0};
        rewind(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        CHECK(strstr(text, "area: kind: shared") != NULL);
        CHECK(strstr(text, "area: alignment: 256") != NULL);
        CHECK(strstr(text, "kind: host") != NULL);
        fclose(f);
    }
}

static void test_layouts(void) {
    int buf[6 * 4];
    size_t dims[2] = {6, 4};
    struct aml_layout* row = NULL;
    struct aml_layout* col = NULL;
    CHECK_EQ(aml_layout_dense_create(&row, buf, AML_LAYOUT_ORDER_ROW_MAJOR, sizeof(int), 2, dims, NULL, NULL),
             AML_SUCCESS);
    CHECK_EQ(aml_layout_dense_create(&col, buf, AML_LAYOUT_ORDER_COLUMN_MAJOR, sizeof(int), 2, dims, NULL, NULL),
             AML_SUCCESS);
    size_t c[2] = {2, 3};
    CHECK(aml_layout_deref(row, c) == &buf[2 * 4 + 3]);
    CHECK(aml_layout_deref(col, c) == &buf[2 + 3 * 6]);
    size_t out[2] = {0, 0};
    CHECK_EQ(aml_layout_dims(row, out), AML_SUCCESS);
    CHECK_EQ(out[0], 6);
    CHECK_EQ(out[1], 4);
    CHECK_EQ(aml_layout_ndims(col), 2);
    CHECK_EQ(aml_layout_element_size(col), sizeof(int));
    CHECK_EQ(aml_layout_order(row), AML_LAYOUT_ORDER_ROW_MAJOR);
    CHECK(aml_layout_rawptr(col) == buf);
    size_t bad[2] = {6, 0};
    aml_errno = AML_SUCCESS;
    CHECK(aml_layout_deref(row, bad) == NULL);
    CHECK_EQ(aml_errno, AML_EDOM);
    size_t zero[2] = {6, 0};
    struct aml_layout* l = NULL;
    CHECK_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, sizeof(int), 2, zero, NULL, NULL), -AML_EINVAL);
    size_t pitch[2] = {5, 4};
    CHECK_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, sizeof(int), 2, dims, NULL, pitch), -AML_EINVAL);
    CHECK_EQ(aml_layout_dense_create(&l, NULL, AML_LAYOUT_ORDER_C, sizeof(int), 2, dims, NULL, NULL), -AML_EINVAL);
    CHECK_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 0, 2, dims, NULL, NULL), -AML_EINVAL);
    CHECK_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 4, 0, dims, NULL, NULL), -AML_EINVAL);
    CHECK(l == NULL);
    aml_layout_destroy(&row);
    aml_layout_destroy(&col);
    CHECK(row == NULL && col == NULL);
}

/* Round trips across every pair of kinds, with copy_1D layouts and with memcpy_op. */
static void test_round_trips(void) {
    const size_t size = 256 * 1024;
    unsigned char* staging = aml_area_mmap(areas[KIND_HOST], size, NULL);
    unsigned char* check = aml_area_mmap(areas[KIND_HOST], size, NULL);
    CHECK(staging && check);
    if (!staging || !check) return;
    unsigned seed = 0;
    for (int from = 0; from < KINDS; ++from) {
        for (int to = 0; to < KINDS; ++to) {
            for (int layouts = 0; layouts < 2; ++layouts) {
                void* src = aml_area_mmap(areas[from], size, NULL);
                void* dst = aml_area_mmap(areas[to], size, NULL);
                CHECK(src && dst);
                if (!src || !dst) continue;
                ++seed;
                for (size_t i = 0; i < size; ++i) staging[i] = byte_at(i, seed);
                CHECK_EQ(copy_bytes(src, staging, size), AML_SUCCESS);
                if (layouts) {
                    size_t n[1] = {size / 4};
                    struct aml_layout *ld = NULL, *ls = NULL;
                    CHECK_EQ(aml_layout_dense_create(&ld, dst, AML_LAYOUT_ORDER_C, 4, 1, n, NULL, NULL), AML_SUCCESS);
                    CHECK_EQ(aml_layout_dense_create(&ls, src, AML_LAYOUT_ORDER_C, 4, 1, n, NULL, NULL), AML_SUCCESS);
                    CHECK_EQ(aml_dma_copy(dma, ld, ls), AML_SUCCESS);
                    aml_layout_destroy(&ld);
                    aml_layout_destroy(&ls);
                } else {
                    CHECK_EQ(copy_bytes(dst, src, size), AML_SUCCESS);
                }
                memset(check, 0, size);
                CHECK_EQ(copy_bytes(check, dst, size), AML_SUCCESS);
                if (memcmp(check, staging, size) != 0) {
                    fprintf(stderr, "round trip %s -> %s (%s) differs\n", kind_names[from], kind_names[to],
                            layouts ? "copy_1D" : "memcpy_op");
                    ++check_failures;
                }
                CHECK_EQ(aml_area_munmap(areas[from], src, size), AML_SUCCESS);
                CHECK_EQ(aml_area_munmap(areas[to], dst, size), AML_SUCCESS);
            }
        }
    }
    aml_area_munmap(areas[KIND_HOST], staging, size);
    aml_area_munmap(areas[KIND_HOST], check, size);
}

/* AML's own DMA test: 128 fire-and-forget copies of 1 KiB, a barrier, every byte checked;
 * then a 1 MiB memcpy_op round trip. */
static void test_fire_and_forget_and_memcpy(void) {
    const size_t chunk = 1024, count = 128, size = chunk * count;
    unsigned char* src = aml_area_mmap(areas[KIND_HOST], size, NULL);
    unsigned char* dev = aml_area_mmap(areas[KIND_DEVICE], size, NULL);
    unsigned char* back = aml_area_mmap(areas[KIND_HOST], size, NULL);
    CHECK(src && dev && back);
    if (!src || !dev || !back) return;
    for (size_t i = 0; i < size; ++i) src[i] = byte_at(i, 99);
    memset(back, 0, size);
    for (size_t i = 0; i < count; ++i) {
        size_t n[1] = {chunk};
        struct aml_layout *ld = NULL, *ls = NULL;
        aml_layout_dense_create(&ld, dev + i * chunk, AML_LAYOUT_ORDER_C, 1, 1, n, NULL, NULL);
        aml_layout_dense_create(&ls, src + i * chunk, AML_LAYOUT_ORDER_C, 1, 1, n, NULL, NULL);
        CHECK_EQ(aml_dma_async_copy(dma, NULL, ld, ls), AML_SUCCESS);
        aml_layout_destroy(&ld); /* the copy no longer needs the layouts */
        aml_layout_destroy(&ls);
    }
    CHECK_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    for (size_t i = 0; i < count; ++i)
        CHECK_EQ(aml_dma_async_copy_custom(dma, NULL, (struct aml_layout*)(back + i * chunk),
                                           (struct aml_layout*)(dev + i * chunk), aml_dma_ze_memcpy_op, (void*)chunk),
                 AML_SUCCESS);
    CHECK_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    CHECK(memcmp(src, back, size) == 0);
    aml_area_munmap(areas[KIND_HOST], src, size);
    aml_area_munmap(areas[KIND_DEVICE], dev, size);
    aml_area_munmap(areas[KIND_HOST], back, size);

    const size_t mib = 1u << 20;
    unsigned char* h = aml_area_mmap(aml_area_ze_host, mib, NULL);
    void* d = aml_area_mmap(aml_area_ze_device, mib, NULL);
    unsigned char* b = aml_area_mmap(aml_area_ze_host, mib, NULL);
    CHECK(h && d && b);
    if (!h || !d || !b) return;
    for (size_t i = 0; i < mib; ++i) h[i] = byte_at(i, 5);
    memset(b, 0, mib);
    CHECK_EQ(aml_dma_copy_custom(aml_dma_ze_default, (struct aml_layout*)d, (struct aml_layout*)h, aml_dma_ze_memcpy_op,
                                 (void*)mib),
             AML_SUCCESS);
    CHECK_EQ(aml_dma_copy_custom(aml_dma_ze_default, (struct aml_layout*)b, (struct aml_layout*)d, aml_dma_ze_memcpy_op,
                                 (void*)mib),
             AML_SUCCESS);
    CHECK(memcmp(h, b, mib) == 0);
    aml_area_munmap(aml_area_ze_host, h, mib);
    aml_area_munmap(aml_area_ze_device, d, mib);
    aml_area_munmap(aml_area_ze_host, b, mib);
}

/* System memory is host memory too: AML's own DMA test copies from malloc'd buffers, with
 * copy_1D layouts and memcpy_op, fire-and-forget and with requests; the stack works alike. */
static void test_system_memory(void) {
    const size_t chunk = 1024, count = 64, size = chunk * count;
    unsigned char* src = malloc(size);
    unsigned char* back = malloc(size);
    unsigned char* dev = aml_area_mmap(areas[KIND_DEVICE], size, NULL);
    CHECK(src && back && dev);
    if (!src || !back || !dev) {
        free(src);
        free(back);
        return;
    }
    for (size_t i = 0; i < size; ++i) src[i] = byte_at(i, 42);
    memset(back, 0, size);
    for (size_t i = 0; i < count; ++i) {
        size_t n[1] = {chunk};
        struct aml_layout *ld = NULL, *ls = NULL;
        CHECK_EQ(aml_layout_dense_create(&ld, dev + i * chunk, AML_LAYOUT_ORDER_C, 1, 1, n, NULL, NULL), AML_SUCCESS);
        CHECK_EQ(aml_layout_dense_create(&ls, src + i * chunk, AML_LAYOUT_ORDER_C, 1, 1, n, NULL, NULL), AML_SUCCESS);
        CHECK_EQ(aml_dma_async_copy_custom(dma, NULL, ld, ls, aml_dma_ze_copy_1D, NULL), AML_SUCCESS);
        aml_layout_destroy(&ld);
        aml_layout_destroy(&ls);
    }
    CHECK_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    struct aml_dma_request* req = NULL;
    CHECK_EQ(aml_dma_async_copy_custom(dma, &req, (struct aml_layout*)back, (struct aml_layout*)dev,
                                       aml_dma_ze_memcpy_op, (void*)size),
             AML_SUCCESS);
    CHECK_EQ(aml_dma_wait(dma, &req), AML_SUCCESS);
    CHECK(req == NULL);
    CHECK(memcmp(src, back, size) == 0);

    /* The stack, both ways. */
    unsigned char on_stack[256];
    memset(on_stack, 0x3C, sizeof on_stack);
    CHECK_EQ(copy_bytes(dev, on_stack, sizeof on_stack), AML_SUCCESS);
    memset(on_stack, 0, sizeof on_stack);
    CHECK_EQ(copy_bytes(on_stack, dev, sizeof on_stack), AML_SUCCESS);
    CHECK(on_stack[0] == 0x3C && on_stack[255] == 0x3C);

    /* Still refused: overlapping ranges (AML_EDOM), a null pointer. */
    CHECK_EQ(copy_bytes(src + 8, src, 64), -AML_EDOM);
    CHECK_EQ(copy_bytes(NULL, src, 64), -AML_EINVAL);
    aml_area_munmap(areas[KIND_DEVICE], dev, size);
    free(src);
    free(back);
}

static void test_requests(zehal_device_t device) {
    const size_t size = 4096;
    unsigned char* src = aml_area_mmap(areas[KIND_HOST], 4 * size, NULL);
    unsigned char* dst = aml_area_mmap(areas[KIND_DEVICE], 4 * size, NULL);
    CHECK(src && dst);
    if (!src || !dst) return;
    struct aml_dma_request* reqs[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; ++i)
        CHECK_EQ(aml_dma_async_copy_custom(dma, &reqs[i], (struct aml_layout*)(dst + i * size),
                                           (struct aml_layout*)(src + i * size), aml_dma_ze_memcpy_op, (void*)size),
                 AML_SUCCESS);
    CHECK_EQ(aml_dma_barrier(dma), AML_SUCCESS);
    for (int i = 0; i < 4; ++i) {
        CHECK(reqs[i] != NULL);
        if (!reqs[i]) continue;
        CHECK_EQ(((struct aml_dma_ze_request*)reqs[i])->flags, AML_DMA_ZE_REQUEST_FLAGS_DONE);
    }
    CHECK_EQ(aml_dma_wait(dma, &reqs[0]), AML_SUCCESS);
    CHECK(reqs[0] == NULL);
    CHECK_EQ(aml_dma_cancel(dma, &reqs[1]), AML_SUCCESS); /* done already: just freed */
    CHECK(reqs[1] == NULL);

    /* A request of another engine, a stale handle, null arguments. */
    struct aml_dma* other = NULL;
    CHECK_EQ(aml_dma_ze_create(&other, device, 0, 0), AML_SUCCESS);
    struct aml_dma_request* held = reqs[2];
    CHECK_EQ(aml_dma_wait(other, &held), -AML_EINVAL);
    CHECK(held == reqs[2]);
    CHECK_EQ(aml_dma_ze_destroy(&other), AML_SUCCESS);
    CHECK(other == NULL);
    CHECK_EQ(aml_dma_wait(dma, &reqs[2]), AML_SUCCESS);
    CHECK_EQ(aml_dma_wait(dma, &held), -AML_EINVAL); /* already freed */
    CHECK_EQ(aml_dma_wait(dma, NULL), -AML_EINVAL);
    CHECK_EQ(aml_dma_wait(NULL, &reqs[3]), -AML_EINVAL);
    CHECK_EQ(aml_dma_cancel(NULL, &reqs[3]), -AML_EINVAL);
    CHECK_EQ(aml_dma_wait(dma, &reqs[3]), AML_SUCCESS);
    struct aml_dma_request* none = NULL;
    CHECK_EQ(aml_dma_wait(dma, &none), -AML_EINVAL);
    CHECK_EQ(aml_dma_cancel(dma, &none), -AML_EINVAL);

    /* Error codes of copies. */
    CHECK_EQ(copy_bytes(src + 8, src, 64), -AML_EDOM);
    CHECK_EQ(copy_bytes(dst, src, 0), -AML_EINVAL);
    CHECK_EQ(copy_bytes(dst, src, 8 * size), -AML_EINVAL);
    CHECK_EQ(aml_dma_copy(NULL, (struct aml_layout*)dst, (struct aml_layout*)src), -AML_EINVAL);
    CHECK_EQ(aml_dma_copy(dma, NULL, (struct aml_layout*)src), -AML_EINVAL);
    CHECK_EQ(aml_dma_barrier(NULL), -AML_EINVAL);
    size_t d2[2] = {64, 64};
    size_t d1[1] = {4096};
    size_t d_small[1] = {1024};
    struct aml_layout *two = NULL, *one = NULL, *small = NULL;
    aml_layout_dense_create(&two, src, AML_LAYOUT_ORDER_C, 1, 2, d2, NULL, NULL);
    aml_layout_dense_create(&one, dst, AML_LAYOUT_ORDER_C, 1, 1, d1, NULL, NULL);
    aml_layout_dense_create(&small, dst, AML_LAYOUT_ORDER_C, 1, 1, d_small, NULL, NULL);
    CHECK_EQ(aml_dma_copy(dma, one, two), -AML_EINVAL);
    struct aml_layout* src1 = NULL;
    aml_layout_dense_create(&src1, src, AML_LAYOUT_ORDER_C, 1, 1, d1, NULL, NULL);
    CHECK_EQ(aml_dma_copy(dma, small, src1), -AML_EINVAL);
    CHECK_EQ(aml_dma_copy(dma, one, src1), AML_SUCCESS);
    aml_layout_destroy(&two);
    aml_layout_destroy(&one);
    aml_layout_destroy(&small);
    aml_layout_destroy(&src1);

    struct aml_dma* d = NULL;
    CHECK_EQ(aml_dma_ze_create(&d, device, 2, 0), -AML_EINVAL);
    CHECK_EQ(aml_dma_ze_create(&d, device, 1, 1000), -AML_EINVAL);
    CHECK_EQ(aml_dma_ze_create(&d, NULL, 1, 0), -AML_EINVAL);
    CHECK_EQ(aml_dma_ze_create(NULL, device, 1, 0), -AML_EINVAL);
    CHECK(d == NULL);
    CHECK_EQ(aml_dma_ze_destroy(NULL), -AML_EINVAL);
    CHECK_EQ(aml_dma_ze_destroy(&d), AML_SUCCESS);

    FILE* f = tmpfile();
    if (f) {
        CHECK_EQ(aml_dma_fprintf(f, "- ", dma), AML_SUCCESS);
        char text[512] = {0};
        rewind(f);
        size_t n = fread(text, 1, sizeof text - 1, f);
        text[n] = 0;
        CHECK(strstr(text, "- dma: ze") != NULL);
        fclose(f);
    }
    aml_area_munmap(areas[KIND_HOST], src, 4 * size);
    aml_area_munmap(areas[KIND_DEVICE], dst, 4 * size);
}

int main(void) {
    test_errors();
    CHECK_EQ(aml_init(NULL, NULL), AML_SUCCESS);
    CHECK(aml_area_ze_device != NULL);
    CHECK(aml_area_ze_host != NULL);
    CHECK(aml_dma_ze_default != NULL);
    zehal_device_t device = NULL;
    test_devices(&device);
    if (!device) return check_report("aml_c_test");
    CHECK_EQ(aml_dma_ze_create(&dma, device, 1, 0), AML_SUCCESS);
    test_areas(device);
    test_layouts();
    test_round_trips();
    test_fire_and_forget_and_memcpy();
    test_system_memory();
    test_requests(device);
    CHECK_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS);
    for (int k = 0; k < KINDS; ++k) aml_area_ze_destroy(&areas[k]);
    CHECK_EQ(aml_finalize(), AML_SUCCESS);
    return check_report("aml_c_test");
}
