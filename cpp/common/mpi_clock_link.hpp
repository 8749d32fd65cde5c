// How zehal's MPI library (libzehal_mpi.so, cpp/mpi) hands the clock samples it measures
// against rank 0 to the trace of a program without Python (metrics/native_trace.cpp): the
// library exports kWatchClockSamples; the trace finds it in the process (dlsym) and gives it
// a sink that writes each sample into the rank's file. Plain C types only: the two sides are
// separate libraries.
#pragma once

#include <cstdint>

namespace zehal {

// One clock sample (docs/tracing.md): `local_ns` of this rank's clock, `reference_ns` of
// rank 0's clock at that moment, within ±`error_ns`; `which` is "start" or "end".
struct MpiClockSample {
    int64_t local_ns;
    int64_t reference_ns;
    int64_t error_ns;
    const char* which;
};

// Receives one sample; called on the thread that took it (in MPI_Init* or MPI_Finalize).
using MpiClockSink = void (*)(const MpiClockSample* sample);

// The name of the library's `void watch(MpiClockSink sink)`: gives `sink` every sample taken
// so far, then each later one as it is taken, until called again with null.
inline constexpr const char* kWatchClockSamples = "zehal_mpi_watch_clock_samples";
// Its type.
using WatchClockSamples = void (*)(MpiClockSink sink);

}  // namespace zehal
