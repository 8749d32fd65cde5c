/* A C program on zehal's C API that tests run under `zehal trace`: copies on the default
 * device's copy engine 0, `argv[1]` of 4 KiB each (default 3), waits `argv[2]` seconds
 * (default 0), then copies 8 KiB once. Built with -DWITH_MPI (mpicc), it is an MPI program
 * whose ranks take turns for the last copy, in rank order, ordered by barriers. Prints "ok"
 * when everything succeeded. */
#define _POSIX_C_SOURCE 200809L
#include <aml.h>
#include <aml/area/ze.h>
#include <aml/dma/ze.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#ifdef WITH_MPI
#include <mpi.h>
#endif

#define CHECK(cond)                                                            \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

static void copy(void* dst, const void* src, size_t size) {
    CHECK(aml_dma_copy_custom(aml_dma_ze_default, (struct aml_layout*)dst, (struct aml_layout*)(uintptr_t)src,
                              aml_dma_ze_memcpy_op, (void*)size) == AML_SUCCESS);
}

int main(int argc, char** argv) {
    int rank = 0, size = 1;
#ifdef WITH_MPI
    CHECK(MPI_Init(&argc, &argv) == MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
#endif
    const int copies = argc > 1 ? atoi(argv[1]) : 3;
    void* host = aml_area_mmap(aml_area_ze_host, 8192, NULL);
    void* device = aml_area_mmap(aml_area_ze_device, 8192, NULL);
    CHECK(host != NULL && device != NULL);
    for (int i = 0; i < copies; ++i) copy(device, host, 4096);
    const struct timespec pause = {argc > 2 ? atoi(argv[2]) : 0, 0};
    nanosleep(&pause, NULL);
    for (int turn = 0; turn < size; ++turn) {
        if (turn == rank) copy(device, host, 8192);
#ifdef WITH_MPI
        MPI_Barrier(MPI_COMM_WORLD);
#endif
    }
    CHECK(aml_area_munmap(aml_area_ze_device, device, 8192) == AML_SUCCESS);
    CHECK(aml_area_munmap(aml_area_ze_host, host, 8192) == AML_SUCCESS);
#ifdef WITH_MPI
    CHECK(MPI_Finalize() == MPI_SUCCESS);
#endif
    puts("ok");
    return 0;
}
