// Virtual memory of the software device: reservations are inaccessible (PROT_NONE) address
// space, physical memory is a memfd, a mapping maps the memfd's pages over the reservation
// (MAP_FIXED | MAP_SHARED) and its access is the pages' protection.
#pragma once

#include <cstddef>
#include <memory>

#include "hal/virtual_memory.hpp"

namespace zehal::sim {

class SimDevice;

// The virtual memory of one sim device (hal/virtual_memory.hpp has the rules). Device
// physical memory counts against the device's memory; host physical memory does not.
class SimVirtualMemory final : public hal::VirtualMemory {
public:
    // Smallest page size, and the one for allocations from kLargePageSize bytes on.
    static constexpr size_t kPageSize = 64u << 10;
    static constexpr size_t kLargePageSize = 2u << 20;

    // The virtual memory of `device`, which outlives it.
    explicit SimVirtualMemory(SimDevice& device) noexcept : device_(device) {}
    // Unmaps and frees every reservation (the device's engines are stopped).
    ~SimVirtualMemory() override;

private:
    size_t do_page_size(size_t size) const noexcept override;
    ze_result_t do_reserve(const void* hint, size_t size, size_t alignment, void** out) override;
    ze_result_t do_import_physical(int fd, size_t size, std::shared_ptr<hal::PhysicalMemory>* out) override;
    void do_free(void* base, size_t size) noexcept override;
    ze_result_t do_create_physical(hal::MemoryKind kind, size_t size,
                                   std::shared_ptr<hal::PhysicalMemory>* out) override;
    ze_result_t do_map(void* ptr, size_t size, hal::PhysicalMemory& physical, size_t offset,
                       hal::MemoryAccess access) override;
    ze_result_t do_unmap(void* ptr, size_t size) noexcept override;
    ze_result_t do_protect(void* ptr, size_t size, hal::PhysicalMemory& physical, hal::MemoryAccess access) override;
    bool do_lost() const noexcept override;

    SimDevice& device_;
};

}  // namespace zehal::sim
