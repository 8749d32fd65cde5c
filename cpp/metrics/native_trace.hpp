// The trace of a process that Python does not trace: a C program on zehal's C API or a
// Level Zero program on zehal's driver, run under `zehal trace` (docs/tracing.md). Its
// host API calls and what its devices do (each device's tracer, from when its backend is
// probed) are streamed into its rank's file, as a Python process's are, and the file is
// finished when the process exits; `zehal trace` (or `zehal trace --merge`) merges the
// rank files. Under MPI, the clock samples come from zehal's MPI library (cpp/mpi) when the
// program runs with it.
#pragma once

namespace zehal::metrics {

// Starts the trace when ZEHAL_TRACE_OUTPUT is set and nothing traces this process yet (the
// variable _ZEHAL_TRACE_ACTIVE_PID, which Python's trace sets too, names another process);
// the file is `<output>.ranks/rank-NNNNN.pftrace` for the rank an MPI launcher gave the
// process (0 without one). Whether it started; a file that cannot be made is reported on
// stderr and the process runs untraced. Each front end calls it as it is loaded.
bool start_native_trace() noexcept;

}  // namespace zehal::metrics
