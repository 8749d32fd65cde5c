#include "hal/cuda/cuda_memory.hpp"

#include <cstdint>

namespace zehal::cuda {

HostMemory::~HostMemory() {
    for (const hal::Allocation& a : registry.take_all()) release_memory(api, a);
}

namespace {

// Raw `bytes` of `kind` into *raw.
CUresult raw_allocate(const DriverApi& api, hal::MemoryKind kind, size_t bytes, void** raw) {
    CUdeviceptr p = 0;
    CUresult r = CUDA_SUCCESS;
    switch (kind) {
        case hal::MemoryKind::device:
            r = api.cuMemAlloc(&p, bytes);
            *raw = reinterpret_cast<void*>(p);
            break;
        case hal::MemoryKind::shared:
            r = api.cuMemAllocManaged(&p, bytes, CU_MEM_ATTACH_GLOBAL);
            *raw = reinterpret_cast<void*>(p);
            break;
        case hal::MemoryKind::host:
            r = api.cuMemHostAlloc(raw, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
            break;
    }
    return r;
}

void raw_release(const DriverApi& api, hal::MemoryKind kind, void* raw) {
    if (kind == hal::MemoryKind::host)
        api.cuMemFreeHost(raw);
    else
        api.cuMemFree(reinterpret_cast<CUdeviceptr>(raw));
}

}  // namespace

ze_result_t allocate_memory(const DriverApi& api, hal::MemoryKind kind, size_t size, size_t alignment,
                            hal::Allocation* out) {
    // CUDA aligns allocations to 256 bytes at least (small pinned ones are carved out of
    // larger blocks, so not to pages): take what it gives when that is aligned enough,
    // else over-allocate by alignment - 1 and align inside.
    void* raw = nullptr;
    size_t bytes = size;
    CUresult r = raw_allocate(api, kind, bytes, &raw);
    if (r == CUDA_SUCCESS && reinterpret_cast<uintptr_t>(raw) % alignment != 0) {
        raw_release(api, kind, raw);
        if (size + (alignment - 1) < size) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
        bytes = size + (alignment - 1);
        r = raw_allocate(api, kind, bytes, &raw);
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

void release_memory(const DriverApi& api, const hal::Allocation& a) { raw_release(api, a.info.kind, a.mapping); }

}  // namespace zehal::cuda
