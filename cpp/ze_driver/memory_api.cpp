// Unified shared memory: host, device and shared allocations, imports of dma-bufs, and
// what a pointer is.
#include "chain.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// Allocation descriptors' flags are placement and caching hints: every bit is accepted and
// none changes what is allocated.

// The checks every allocation shares, in the specification's order.
ze_result_t check_allocation(ze_context_handle_t hContext, size_t size, size_t alignment, void** pptr) {
    std::shared_ptr<ContextObject> c;
    if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
    if (!pptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment & (alignment - 1)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    return ZE_RESULT_SUCCESS;
}

ze_result_t allocate(DeviceObject* d, hal::MemoryKind kind, size_t size, size_t alignment, uint32_t ordinal,
                     void** pptr) {
    if (ordinal >= d->device->properties().memory_ordinals) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return d->device->allocate(kind, size, alignment, 0, ordinal, pptr);
}

// A device allocation over the dma-buf of `import` (its size is the allocation's).
ze_result_t import(DeviceObject* d, const ze_external_memory_import_fd_t* import, size_t size, void** pptr) {
    if (import->flags != ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF) return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    if (import->fd < 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return d->device->import_dma_buf(import->fd, size, pptr);
}

ze_result_t zeMemAllocDevice_(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* desc, size_t size,
                              size_t alignment, ze_device_handle_t hDevice, void** pptr) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (ze_result_t r = check_allocation(hContext, size, alignment, pptr); r != ZE_RESULT_SUCCESS) return r;
        if (auto* fd = find_in_chain<const ze_external_memory_import_fd_t>(
                desc, {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC}, ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD))
            return import(d, fd, size, pptr);
        return allocate(d, hal::MemoryKind::device, size, alignment, desc->ordinal, pptr);
    });
}

ze_result_t zeMemAllocShared_(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                              const ze_host_mem_alloc_desc_t* host_desc, size_t size, size_t alignment,
                              ze_device_handle_t hDevice, void** pptr) {
    return ze_guarded([&] {
        DeviceObject* d = nullptr;
        if (hDevice) {
            if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        } else if (DriverObject* drv = driver()) {
            d = drv->devices.front().get();  // no device: shared with the driver's first one
        }
        if (!d) return ZE_RESULT_ERROR_UNINITIALIZED;
        if (!device_desc || !host_desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (ze_result_t r = check_allocation(hContext, size, alignment, pptr); r != ZE_RESULT_SUCCESS) return r;
        return allocate(d, hal::MemoryKind::shared, size, alignment, device_desc->ordinal, pptr);
    });
}

ze_result_t zeMemAllocHost_(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t* host_desc, size_t size,
                            size_t alignment, void** pptr) {
    return ze_guarded([&] {
        if (!host_desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (ze_result_t r = check_allocation(hContext, size, alignment, pptr); r != ZE_RESULT_SUCCESS) return r;
        // Host memory of the first device's backend: the pinned kind of the driver's first GPU.
        return allocate(driver()->devices.front().get(), hal::MemoryKind::host, size, alignment, 0, pptr);
    });
}

ze_result_t zeMemFree_(ze_context_handle_t hContext, void* ptr) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::PointerInfo info;
        DeviceObject* owner = owner_of(ptr, &info);
        if (!owner || info.base != ptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        return owner->device->free(ptr);
    });
}

ze_result_t zeMemGetAllocProperties_(ze_context_handle_t hContext, const void* ptr,
                                     ze_memory_allocation_properties_t* props, ze_device_handle_t* phDevice) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr || !props) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::PointerInfo info;
        DeviceObject* owner = owner_of(ptr, &info);
        props->type = ZE_MEMORY_TYPE_UNKNOWN;
        props->id = 0;
        props->pageSize = 0;
        if (phDevice) *phDevice = nullptr;
        if (!owner) return ZE_RESULT_SUCCESS;  // not zehal's memory: type unknown
        switch (info.kind) {
            case hal::MemoryKind::host:
                props->type = ZE_MEMORY_TYPE_HOST;
                break;
            case hal::MemoryKind::device:
                props->type = ZE_MEMORY_TYPE_DEVICE;
                break;
            case hal::MemoryKind::shared:
                props->type = ZE_MEMORY_TYPE_SHARED;
                break;
        }
        props->id = reinterpret_cast<uintptr_t>(info.base);
        props->pageSize = std::max<size_t>(info.alignment, 4096);
        if (phDevice && info.kind != hal::MemoryKind::host) *phDevice = handle_of(owner);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeMemGetAddressRange_(ze_context_handle_t hContext, const void* ptr, void** pBase, size_t* pSize) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::PointerInfo info;
        if (!owner_of(ptr, &info)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (pBase) *pBase = info.base;
        if (pSize) *pSize = info.size;
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeMemAllocDevice, zeMemAllocDevice_),
    ZEHAL_ENTRY(zeMemAllocShared, zeMemAllocShared_),
    ZEHAL_ENTRY(zeMemAllocHost, zeMemAllocHost_),
    ZEHAL_ENTRY(zeMemFree, zeMemFree_),
    ZEHAL_ENTRY(zeMemGetAllocProperties, zeMemGetAllocProperties_),
    ZEHAL_ENTRY(zeMemGetAddressRange, zeMemGetAddressRange_),
};

}  // namespace

std::span<const Entry> memory_entries() { return kEntries; }

}  // namespace zehal::ze_driver
