#include "hal/cuda/cuda_memory.hpp"

#include <unistd.h>

#include <cstdint>

namespace zehal::cuda {

namespace {
size_t page_size() {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return page;
}
}  // namespace

HostMemory::~HostMemory() {
    for (const hal::Allocation& a : registry.take_all()) release_memory(api, a);
}

size_t natural_alignment(hal::MemoryKind kind) noexcept {
    return kind == hal::MemoryKind::host ? page_size() : 256;
}

ze_result_t allocate_memory(const DriverApi& api, hal::MemoryKind kind, size_t size, size_t alignment,
                            hal::Allocation* out) {
    const size_t natural = natural_alignment(kind);
    if (alignment < natural) alignment = natural;
    const size_t extra = alignment - natural;
    if (size + extra < size) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    const size_t bytes = size + extra;

    void* raw = nullptr;
    CUresult r = CUDA_SUCCESS;
    switch (kind) {
        case hal::MemoryKind::device: {
            CUdeviceptr p = 0;
            r = api.cuMemAlloc(&p, bytes);
            raw = reinterpret_cast<void*>(p);
            break;
        }
        case hal::MemoryKind::shared: {
            CUdeviceptr p = 0;
            r = api.cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
            raw = reinterpret_cast<void*>(p);
            break;
        }
        case hal::MemoryKind::host:
            r = api.cuMemHostAlloc(&raw, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
            break;
    }
    if (r != CUDA_SUCCESS) {
        if (r == CUDA_ERROR_OUT_OF_MEMORY || r == CUDA_ERROR_INVALID_VALUE) {
            // cuMemHostAlloc answers INVALID_VALUE for sizes the system cannot pin.
            return kind == hal::MemoryKind::host ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                                 : ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
        }
        return to_ze_result(r);
    }
    const auto start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
    out->mapping = raw;
    out->mapping_bytes = bytes;
    out->info.kind = kind;
    out->info.base = reinterpret_cast<void*>(aligned);
    out->info.size = size;
    out->info.alignment = alignment;
    out->info.imported = false;
    return ZE_RESULT_SUCCESS;
}

void release_memory(const DriverApi& api, const hal::Allocation& a) {
    if (a.info.kind == hal::MemoryKind::host)
        api.cuMemFreeHost(a.mapping);
    else
        api.cuMemFree(reinterpret_cast<CUdeviceptr>(a.mapping));
}

}  // namespace zehal::cuda
