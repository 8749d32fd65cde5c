#include "hal/cuda/cuda_virtual_memory.hpp"

#include <new>

#include "hal/cuda/cuda_device.hpp"

namespace zehal::cuda {

namespace {

CUdeviceptr device_address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

CUmemAllocationProp allocation_prop(hal::MemoryKind kind, int ordinal) {
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    if (kind == hal::MemoryKind::host) {
        prop.location.type = CU_MEM_LOCATION_TYPE_HOST;
    } else {
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id = ordinal;
    }
    return prop;
}

CUmemAccess_flags protection(hal::MemoryAccess access) {
    switch (access) {
        case hal::MemoryAccess::read_write:
            return CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        case hal::MemoryAccess::read_only:
            return CU_MEM_ACCESS_FLAGS_PROT_READ;
        case hal::MemoryAccess::none:
            break;
    }
    return CU_MEM_ACCESS_FLAGS_PROT_NONE;
}

// Physical memory: a handle of cuMemCreate, released with the last reference.
class CudaPhysicalMemory final : public hal::PhysicalMemory {
public:
    CudaPhysicalMemory(const DriverApi& api, hal::MemoryKind kind, size_t size,
                       CUmemGenericAllocationHandle handle) noexcept
        : PhysicalMemory(kind, size),
          api_(api),
          handle_(handle) {}
    ~CudaPhysicalMemory() override { api_.cuMemRelease(handle_); }
    CUmemGenericAllocationHandle handle() const noexcept { return handle_; }

private:
    const DriverApi& api_;
    const CUmemGenericAllocationHandle handle_;
};

}  // namespace

CudaVirtualMemory::CudaVirtualMemory(const DriverApi& api, CudaDevice& device, int ordinal) noexcept
    : api_(api),
      device_(device),
      ordinal_(ordinal) {
    const CUmemAllocationProp prop = allocation_prop(hal::MemoryKind::device, ordinal);
    size_t g = 0;
    if (api_.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) == CUDA_SUCCESS && g)
        granularity_ = g;
    if (api_.cuMemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) == CUDA_SUCCESS &&
        g >= granularity_ && g % granularity_ == 0)
        recommended_ = g;
    else
        recommended_ = granularity_;
}

size_t CudaVirtualMemory::do_page_size(size_t size) const noexcept {
    return size >= recommended_ ? recommended_ : granularity_;
}

ze_result_t CudaVirtualMemory::do_reserve(const void* hint, size_t size, size_t alignment, void** out) {
    if (ze_result_t r = device_.ready(); r != ZE_RESULT_SUCCESS) return r;
    ContextScope scope(api_, device_.context());
    CUdeviceptr base = 0;
    CUresult r = api_.cuMemAddressReserve(&base, size, alignment, device_address(hint), 0);
    // A hint the driver cannot take is only a hint.
    if (r != CUDA_SUCCESS && hint) r = api_.cuMemAddressReserve(&base, size, alignment, 0, 0);
    if (r == CUDA_ERROR_OUT_OF_MEMORY || r == CUDA_ERROR_INVALID_VALUE) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (ze_result_t res = device_.check(r); res != ZE_RESULT_SUCCESS) return res;
    *out = reinterpret_cast<void*>(base);
    return ZE_RESULT_SUCCESS;
}

void CudaVirtualMemory::do_free(void* base, size_t size) noexcept {
    ContextScope scope(api_, device_.context());
    api_.cuMemAddressFree(device_address(base), size);
}

ze_result_t CudaVirtualMemory::do_create_physical(hal::MemoryKind kind, size_t size,
                                                  std::shared_ptr<hal::PhysicalMemory>* out) {
    if (ze_result_t r = device_.ready(); r != ZE_RESULT_SUCCESS) return r;
    ContextScope scope(api_, device_.context());
    const CUmemAllocationProp prop = allocation_prop(kind, ordinal_);
    CUmemGenericAllocationHandle handle = 0;
    const CUresult r = api_.cuMemCreate(&handle, size, &prop, 0);
    if (r != CUDA_SUCCESS) {
        // A driver without host-located physical memory refuses the location.
        if (kind == hal::MemoryKind::host &&
            (r == CUDA_ERROR_INVALID_VALUE || r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_INVALID_DEVICE))
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        if (r == CUDA_ERROR_OUT_OF_MEMORY)
            return kind == hal::MemoryKind::host ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
                                                 : ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
        return device_.check(r);
    }
    try {
        *out = std::make_shared<CudaPhysicalMemory>(api_, kind, size, handle);
    } catch (const std::bad_alloc&) {
        api_.cuMemRelease(handle);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

CUresult CudaVirtualMemory::set_access(void* ptr, size_t size, hal::MemoryKind kind,
                                       hal::MemoryAccess access) noexcept {
    CUmemAccessDesc desc[2]{};
    desc[0].location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    desc[0].location.id = ordinal_;
    desc[0].flags = protection(access);
    CUresult r = api_.cuMemSetAccess(device_address(ptr), size, desc, 1);
    if (r != CUDA_SUCCESS || kind != hal::MemoryKind::host) return r;
    // Host memory is the host's too where the driver grants it (else only the device's).
    desc[1].location.type = CU_MEM_LOCATION_TYPE_HOST;
    desc[1].flags = protection(access);
    api_.cuMemSetAccess(device_address(ptr), size, &desc[1], 1);
    return CUDA_SUCCESS;
}

ze_result_t CudaVirtualMemory::do_map(void* ptr, size_t size, hal::PhysicalMemory& physical, size_t offset,
                                      hal::MemoryAccess access) {
    ContextScope scope(api_, device_.context());
    const auto handle = static_cast<CudaPhysicalMemory&>(physical).handle();
    CUresult r = api_.cuMemMap(device_address(ptr), size, offset, handle, 0);
    if (r == CUDA_SUCCESS && access != hal::MemoryAccess::none) {
        r = set_access(ptr, size, physical.kind(), access);
        if (r != CUDA_SUCCESS) api_.cuMemUnmap(device_address(ptr), size);
    }
    return device_.check(r);
}

ze_result_t CudaVirtualMemory::do_unmap(void* ptr, size_t size) noexcept {
    ContextScope scope(api_, device_.context());
    // Work queued before (in any stream of the context) may still use the range.
    CUresult r = api_.cuCtxSynchronize();
    if (r == CUDA_SUCCESS) r = api_.cuMemUnmap(device_address(ptr), size);
    return device_.check(r);
}

ze_result_t CudaVirtualMemory::do_protect(void* ptr, size_t size, hal::PhysicalMemory& physical,
                                          hal::MemoryAccess access) {
    ContextScope scope(api_, device_.context());
    // As in do_unmap: a narrower access must not meet work queued under the wider one.
    CUresult r = api_.cuCtxSynchronize();
    if (r == CUDA_SUCCESS) r = set_access(ptr, size, physical.kind(), access);
    return device_.check(r);
}

bool CudaVirtualMemory::do_lost() const noexcept { return device_.lost(); }

}  // namespace zehal::cuda
