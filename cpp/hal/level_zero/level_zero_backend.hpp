// The Intel backend: the Level Zero loader opened at run time.
#pragma once

#include "hal/backend.hpp"

namespace zehal::level_zero {

// The registry's entry: available when libze_loader.so.1 loads, zeInit succeeds and a
// GPU device exists; otherwise the reason.
hal::BackendStatus probe();

}  // namespace zehal::level_zero
