// libzehal_mpi.so: MPI_Init, MPI_Init_thread and MPI_Finalize through MPI's profiling
// interface (each calls its PMPI_ twin), as tools such as Score-P and mpiP do. When the
// process is traced (ZEHAL_TRACE_OUTPUT set, as `zehal trace` sets it), they measure this
// rank's clock against rank 0's, once after MPI starts and once before it ends, on a
// communicator of their own, and hand the samples to the trace of the process
// (common/mpi_clock_link.hpp), which writes them into the rank's file; the merge aligns
// the ranks' clocks with them (docs/tracing.md). Untraced, they only call MPI.
#include <mpi.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "clock_exchange.hpp"
#include "common/clock_skew.hpp"
#include "common/mpi_clock_link.hpp"

namespace zehal::mpi {
namespace {

constexpr int kRounds = 32;  // pings per sample, as the Python trace sends

// The samples of this process and where they go.
struct ClockState {
    std::mutex mu;
    MPI_Comm comm = MPI_COMM_NULL;  // the exchanges' own communicator (a copy of MPI_COMM_WORLD)
    ClockSkew skew;
    std::vector<MpiClockSample> samples;
    MpiClockSink sink = nullptr;
};

ClockState& state() {
    static auto* s = new ClockState;  // never destroyed: MPI_Finalize may run in an exit handler
    return *s;
}

// Takes the sample `which` (a string of static storage) and hands it to the sink, if any.
void take_sample(ClockState& s, const char* which) {
    MpiClockSample sample{};
    if (exchange(s.comm, s.skew, kRounds, &sample) != MPI_SUCCESS) return;
    sample.which = which;
    std::lock_guard lock(s.mu);
    s.samples.push_back(sample);
    if (s.sink) s.sink(&sample);
}

// After MPI started: the start sample, when this process is traced.
void started() {
    const char* output = std::getenv("ZEHAL_TRACE_OUTPUT");
    if (!output || !*output) return;
    ClockState& s = state();
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &s.comm) != MPI_SUCCESS) return;
    s.skew = test_clock_skew();
    take_sample(s, "start");
}

}  // namespace
}  // namespace zehal::mpi

extern "C" {

// The interposed MPI functions and the trace's entry point: the only symbols exported.
__attribute__((visibility("default"))) int MPI_Init(int* argc, char*** argv) {
    const int r = PMPI_Init(argc, argv);
    if (r == MPI_SUCCESS) zehal::mpi::started();
    return r;
}

__attribute__((visibility("default"))) int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    const int r = PMPI_Init_thread(argc, argv, required, provided);
    if (r == MPI_SUCCESS) zehal::mpi::started();
    return r;
}

__attribute__((visibility("default"))) int MPI_Finalize(void) {
    zehal::mpi::ClockState& s = zehal::mpi::state();
    if (s.comm != MPI_COMM_NULL) {
        zehal::mpi::take_sample(s, "end");
        PMPI_Comm_free(&s.comm);
    }
    return PMPI_Finalize();
}

__attribute__((visibility("default"))) void zehal_mpi_watch_clock_samples(zehal::MpiClockSink sink) {
    zehal::mpi::ClockState& s = zehal::mpi::state();
    std::lock_guard lock(s.mu);
    s.sink = sink;
    if (sink)
        for (const zehal::MpiClockSample& sample : s.samples) sink(&sample);
}

}  // extern "C"
