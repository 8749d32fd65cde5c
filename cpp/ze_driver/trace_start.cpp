// The driver's start: a Level Zero program on libze_zehal.so, run under `zehal trace`, records
// its calls of the driver's entry points into its rank's trace file from the moment the
// loader loads the driver (docs/tracing.md). The driver's copy of the layers has its own API
// call log, which this trace drains.
#include "metrics/native_trace.hpp"

namespace {

[[gnu::constructor]] void start_trace() { zehal::metrics::start_native_trace(); }

}  // namespace
