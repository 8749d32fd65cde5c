// Virtual memory of a CUDA device through the driver's virtual memory management:
// cuMemAddressReserve / cuMemAddressFree for reservations, cuMemCreate / cuMemRelease for
// physical memory (on the device, or on the host where the driver offers it), cuMemMap /
// cuMemUnmap for mappings and cuMemSetAccess for their access.
#pragma once

#include <cstddef>
#include <memory>

#include "hal/cuda/driver_api.hpp"
#include "hal/virtual_memory.hpp"

namespace zehal::cuda {

class CudaDevice;

// The virtual memory of one CUDA device (hal/virtual_memory.hpp has the rules). Page sizes
// are the driver's allocation granularities. Unmapping and narrowing an access first wait
// for the work of the device's context (CUDA commands hold no zehal allocation).
class CudaVirtualMemory final : public hal::VirtualMemory {
public:
    // The virtual memory of `device` (device `ordinal`), which outlives it.
    CudaVirtualMemory(const DriverApi& api, CudaDevice& device, int ordinal) noexcept;
    // Unmaps and frees every reservation; the device calls it while its context is retained.
    void shutdown() noexcept { release_all(); }

private:
    size_t do_page_size(size_t size) const noexcept override;
    ze_result_t do_reserve(const void* hint, size_t size, size_t alignment, void** out) override;
    void do_free(void* base, size_t size) noexcept override;
    ze_result_t do_create_physical(hal::MemoryKind kind, size_t size,
                                   std::shared_ptr<hal::PhysicalMemory>* out) override;
    ze_result_t do_map(void* ptr, size_t size, hal::PhysicalMemory& physical, size_t offset,
                       hal::MemoryAccess access) override;
    ze_result_t do_unmap(void* ptr, size_t size) noexcept override;
    ze_result_t do_protect(void* ptr, size_t size, hal::PhysicalMemory& physical, hal::MemoryAccess access) override;
    bool do_lost() const noexcept override;

    // Grants `access` to [ptr, ptr + size) for the device, and for the host where the
    // physical memory lies on the host.
    CUresult set_access(void* ptr, size_t size, hal::MemoryKind kind, hal::MemoryAccess access) noexcept;

    const DriverApi& api_;
    CudaDevice& device_;
    const int ordinal_;
    size_t granularity_ = 2u << 20;  // minimum granularity of device memory
    size_t recommended_ = 2u << 20;  // recommended granularity, for large allocations
};

}  // namespace zehal::cuda
