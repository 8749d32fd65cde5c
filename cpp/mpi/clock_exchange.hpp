// One clock sample of this rank against rank 0's over MPI, measured as zehal's Python trace
// measures it (python/zehal/clock_sync.py, `exchange`): rank 0 serves the other ranks in
// turn, each sends `rounds` pings that rank 0 answers with its clock, and keeps the one of
// the shortest round trip: rank 0's reading lies inside it, so the sample's error bound is
// half that round trip. Only PMPI_* functions are called, so that the library's own
// MPI_* wrappers (mpi_wrappers.cpp) are not entered again.
#pragma once

#include <mpi.h>

#include "common/clock_skew.hpp"
#include "common/mpi_clock_link.hpp"

namespace zehal::mpi {

// Collective over `comm`: every rank calls it. Times are read on CLOCK_MONOTONIC_RAW moved
// by `skew` (the test-only skew of the rank, as the trace reads its clock). The sample's
// `which` is left null. MPI's error code when a message fails (the sample is then unset).
int exchange(MPI_Comm comm, const ClockSkew& skew, int rounds, MpiClockSample* out);

}  // namespace zehal::mpi
