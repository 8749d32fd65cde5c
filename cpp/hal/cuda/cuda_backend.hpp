// The NVIDIA backend: CUDA driver API and CUPTI opened at run time.
#pragma once

#include "hal/backend.hpp"

namespace zehal::cuda {

// The registry's entry: available when libcuda.so.1 loads, cuInit succeeds and a device
// exists; otherwise the reason.
hal::BackendStatus probe();

}  // namespace zehal::cuda
