// Memory of the CUDA backend: device (cuMemAlloc), pinned host (cuMemHostAlloc, portable and
// mapped) and managed (cuMemAllocManaged) allocations with any power-of-two alignment.
#pragma once

#include <cstddef>
#include <memory>

#include "hal/cuda/driver_api.hpp"
#include "hal/host_memory.hpp"

namespace zehal::cuda {

// Host memory of the backend: allocated and freed through any CUDA device, portable pinned
// memory that every CUDA device copies on the fast path; usable by every device of every
// backend (contract §2.2). One per backend.
struct HostMemory {
    explicit HostMemory(const DriverApi& api) : api(api) {}
    ~HostMemory();
    const DriverApi& api;
    hal::HostMemoryRegistry registry{"cuda"};
};

// Allocates `size` bytes of `kind` aligned to `alignment` (a power of two, not 0) into
// `out` (info and mapping; over-allocates when CUDA's pointer is not aligned enough). The
// calling thread's current context is the device's. UNSUPPORTED_SIZE when size plus
// alignment overflows; OUT_OF_DEVICE_MEMORY or OUT_OF_HOST_MEMORY when CUDA has no room;
// other failures as to_ze_result().
ze_result_t allocate_memory(const DriverApi& api, hal::MemoryKind kind, size_t size, size_t alignment,
                            hal::Allocation* out);
// Releases what allocate_memory gave (any context of the backend current).
void release_memory(const DriverApi& api, const hal::Allocation& a);

}  // namespace zehal::cuda
