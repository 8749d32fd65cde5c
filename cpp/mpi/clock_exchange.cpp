#include "clock_exchange.hpp"

#include <cstdint>

#include "common/clock.hpp"

namespace zehal::mpi {
namespace {

constexpr int kTag = 0x7A51;  // the message tag of the exchange (clock_sync.py's too)

}  // namespace

int exchange(MPI_Comm comm, const ClockSkew& skew, int rounds, MpiClockSample* out) {
    int rank = 0, size = 1;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    int64_t buf = 0;
    int r = MPI_SUCCESS;
    if (rank == 0) {
        for (int peer = 1; peer < size && r == MPI_SUCCESS; ++peer) {
            r = PMPI_Send(&buf, 1, MPI_INT64_T, peer, kTag, comm);
            for (int k = 0; k < rounds && r == MPI_SUCCESS; ++k) {
                r = PMPI_Recv(&buf, 1, MPI_INT64_T, peer, kTag, comm, MPI_STATUS_IGNORE);
                buf = skew.apply(host_now_ns());
                if (r == MPI_SUCCESS) r = PMPI_Send(&buf, 1, MPI_INT64_T, peer, kTag, comm);
            }
        }
        const int64_t now = skew.apply(host_now_ns());
        if (r == MPI_SUCCESS) r = PMPI_Barrier(comm);
        *out = {now, now, 0, nullptr};
        return r;
    }
    r = PMPI_Recv(&buf, 1, MPI_INT64_T, 0, kTag, comm, MPI_STATUS_IGNORE);
    MpiClockSample best{0, 0, -1, nullptr};
    for (int k = 0; k < rounds && r == MPI_SUCCESS; ++k) {
        const int64_t t1 = skew.apply(host_now_ns());
        r = PMPI_Send(&buf, 1, MPI_INT64_T, 0, kTag, comm);
        if (r == MPI_SUCCESS) r = PMPI_Recv(&buf, 1, MPI_INT64_T, 0, kTag, comm, MPI_STATUS_IGNORE);
        const int64_t t2 = skew.apply(host_now_ns());
        const int64_t half = (t2 - t1 + 1) / 2;
        if (r == MPI_SUCCESS && (best.error_ns < 0 || half < best.error_ns)) best = {(t1 + t2) / 2, buf, half, nullptr};
    }
    if (r == MPI_SUCCESS) r = PMPI_Barrier(comm);
    if (r == MPI_SUCCESS) *out = best;
    return r;
}

}  // namespace zehal::mpi
