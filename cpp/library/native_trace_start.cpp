// libzehal.so's start: a program on the C API, run under `zehal trace`, records its host API
// calls into its rank's trace file from the moment the library is loaded (docs/tracing.md).
#include "metrics/native_trace.hpp"

namespace {

[[gnu::constructor]] void start_trace() { zehal::metrics::start_native_trace(); }

}  // namespace
