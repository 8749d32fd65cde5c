// Tiny device kernels from embedded PTX (loaded with cuModuleLoadData): they read the GPU's
// global timer (%globaltimer, ns) around commands and probe writes into exported memory.
#pragma once

#include <cstdint>

#include "hal/cuda/driver_api.hpp"

namespace zehal::cuda {

// Where zehal_export_probe reports: filled by the device, read by the host.
struct ExportProbeSlot {
    uint64_t ticks;  // %globaltimer after the write
    uint32_t word;   // first 32-bit word written (little-endian, short writes zero-padded)
    uint32_t ready;  // set to 1 last, after a system-wide fence
};
static_assert(sizeof(ExportProbeSlot) == 16, "the PTX writes the slot at offsets 0, 8 and 12");

// The kernels of one context. Every launch is one thread on `stream`; pointers are device
// addresses of pinned, mapped host memory (the same value under unified addressing).
class DeviceKernels {
public:
    // Loads the module into `ctx` (must be current). Returns the CUresult of the load.
    CUresult load(const DriverApi& api);
    // Releases the module (its context must still be alive and current).
    void unload(const DriverApi& api);

    // *ticks = %globaltimer.
    CUresult timestamp(const DriverApi& api, CUstream stream, uint64_t* ticks) const;
    // *ticks = %globaltimer, then, after a system-wide fence, *flag = value.
    CUresult timestamp_signal(const DriverApi& api, CUstream stream, uint64_t* ticks, uint32_t* flag,
                              uint32_t value) const;
    // Reads the first min(nbytes, 4) bytes at `src` and the timer into *slot, ready last.
    CUresult export_probe(const DriverApi& api, CUstream stream, const void* src, uint32_t nbytes,
                          ExportProbeSlot* slot) const;

private:
    CUmodule module_ = nullptr;
    CUfunction timestamp_ = nullptr;
    CUfunction timestamp_signal_ = nullptr;
    CUfunction export_probe_ = nullptr;
};

}  // namespace zehal::cuda
