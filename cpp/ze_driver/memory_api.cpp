// Unified shared memory: host, device and shared allocations, their export as dma-bufs,
// imports of dma-bufs, and what a pointer is.
#include "chain.hpp"
#include "deferred_free.hpp"
#include "dispatch.hpp"
#include "ipc_openings.hpp"
#include "memory_file.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"
#include "hal/virtual_memory.hpp"

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

// Every external memory type the specification this driver implements defines.
constexpr uint32_t kExternalMemoryTypes = ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_FD |
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF |
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32 |
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_OPAQUE_WIN32_KMT |
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_TEXTURE |
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_D3D11_TEXTURE_KMT |
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_HEAP |
                                          ZE_EXTERNAL_MEMORY_TYPE_FLAG_D3D12_RESOURCE;

// The export types an allocation descriptor's chain asks for (0: none, a plain allocation).
// Bits outside every type are INVALID_ENUMERATION; a type other than dma-buf, the only one
// zehal exports, UNSUPPORTED_ENUMERATION.
template <typename Desc>
ze_result_t export_request(const Desc* desc, uint32_t desc_stype, bool* exportable) {
    *exportable = false;
    const auto* e = find_in_chain<const ze_external_memory_export_desc_t>(
        desc, {desc_stype}, ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_DESC);
    if (!e || e->flags == 0) return ZE_RESULT_SUCCESS;
    if (e->flags & ~kExternalMemoryTypes) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (e->flags != ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF) return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    *exportable = true;
    return ZE_RESULT_SUCCESS;
}

// An allocation of `kind`. Wherever the device exports that kind, every allocation is made
// exportable, as Intel's driver makes every allocation: zeMemGetAllocProperties exports it as
// a dma-buf and zeMemGetIpcHandle shares it with another process, whether or not an export
// descriptor asked. `export_requested` where the device exports no such memory is
// UNSUPPORTED_FEATURE.
ze_result_t allocate(DeviceObject* d, hal::MemoryKind kind, size_t size, size_t alignment, uint32_t ordinal,
                     bool export_requested, void** pptr) {
    if (ordinal >= d->device->properties().memory_ordinals) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (d->device->exportable_kinds() & (1u << static_cast<uint32_t>(kind))) {
        const ze_result_t r = d->device->allocate_exportable(kind, size, alignment, 0, ordinal, pptr);
        // An allocation nobody asked to export is still made when the exportable one is not
        // (a process out of file descriptors: each exportable allocation holds one); it then
        // exports nothing.
        if (r == ZE_RESULT_SUCCESS || export_requested) return r;
        return d->device->allocate(kind, size, alignment, 0, ordinal, pptr);
    }
    if (export_requested) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return d->device->allocate(kind, size, alignment, 0, ordinal, pptr);
}

// A device (or, with `host`, host) allocation over the dma-buf of `import` (its size is the
// allocation's).
ze_result_t import(DeviceObject* d, const ze_external_memory_import_fd_t* import, size_t size, bool host, void** pptr) {
    if (import->flags != ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF) return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    if (import->fd < 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return host ? d->device->import_host_dma_buf(import->fd, size, pptr)
                : d->device->import_dma_buf(import->fd, size, pptr);
}

// Fills the ze_external_memory_export_fd_t chained to `props`, if any, with the dma-buf of the
// memory at `ptr` (of `owner`, null for memory not zehal's; `info` describes it): an
// allocation's own fd, valid until the allocation is freed, which closes it, or the fd of the
// physical memory a reserved range maps there, valid while that memory lives. Flags 0 ask for
// the default type, dma-buf. Memory that does not export (not zehal's, of a device that
// exports no such memory, imported, a reserved page that maps nothing) is INVALID_ARGUMENT.
ze_result_t export_fd(ze_memory_allocation_properties_t* props, DeviceObject* owner, const hal::PointerInfo& info,
                      const void* ptr) {
    auto* e = find_in_chain<ze_external_memory_export_fd_t>(props, {ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES},
                                                            ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_EXPORT_FD);
    if (!e) return ZE_RESULT_SUCCESS;
    if (e->flags & ~kExternalMemoryTypes) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (e->flags != 0 && e->flags != ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF)
        return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
    if (!owner) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    MemoryFile file;
    const ze_result_t r = memory_file(owner, info, ptr, &file);
    if (r == ZE_RESULT_ERROR_DEVICE_LOST) return r;
    if (r != ZE_RESULT_SUCCESS) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    e->fd = file.fd;
    return ZE_RESULT_SUCCESS;
}

// The device whose backend gives a context's host memory: the driver's first device (the
// pinned kind of its first GPU), unless the allocation is exported or imported, which goes to
// the first device that can (the sim device where a GPU cannot: docs/ze_driver.md).
DeviceObject* host_memory_device(bool exported, bool imported) {
    const auto& all = driver()->devices;
    for (const auto& d : all) {
        if (exported && (d->device->exportable_kinds() & (1u << static_cast<uint32_t>(hal::MemoryKind::host))))
            return d.get();
        if (imported && d->device->imports_any_dma_buf()) return d.get();
    }
    return all.front().get();
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
            return import(d, fd, size, false, pptr);
        bool exportable = false;
        if (ze_result_t r = export_request(desc, ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &exportable);
            r != ZE_RESULT_SUCCESS)
            return r;
        return allocate(d, hal::MemoryKind::device, size, alignment, desc->ordinal, exportable, pptr);
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
        bool exportable = false;
        if (ze_result_t r = export_request(device_desc, ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, &exportable);
            r != ZE_RESULT_SUCCESS)
            return r;
        return allocate(d, hal::MemoryKind::shared, size, alignment, device_desc->ordinal, exportable, pptr);
    });
}

ze_result_t zeMemAllocHost_(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t* host_desc, size_t size,
                            size_t alignment, void** pptr) {
    return ze_guarded([&] {
        if (!host_desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (ze_result_t r = check_allocation(hContext, size, alignment, pptr); r != ZE_RESULT_SUCCESS) return r;
        if (auto* fd = find_in_chain<const ze_external_memory_import_fd_t>(
                host_desc, {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC}, ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD))
            return import(host_memory_device(false, true), fd, size, true, pptr);
        bool exportable = false;
        if (ze_result_t r = export_request(host_desc, ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, &exportable);
            r != ZE_RESULT_SUCCESS)
            return r;
        return allocate(host_memory_device(exportable, false), hal::MemoryKind::host, size, alignment, 0, exportable,
                        pptr);
    });
}

// Frees an allocation of the driver's devices: the HAL's free waits for the commands that
// use it (the blocking policy of zeMemFreeExt, which zeMemFree also follows). `defer`
// (the deferred policy) hands that wait to the driver's freeing thread and returns at once.
ze_result_t free_allocation(ze_context_handle_t hContext, void* ptr, bool defer) {
    std::shared_ptr<ContextObject> c;
    if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
    if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    hal::PointerInfo info;
    DeviceObject* owner = owner_of(ptr, &info);
    if (!owner || info.base != ptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // A reservation is zeVirtualMemFree's: checked here, since a deferred free has no
    // caller left to tell.
    if (hal::VirtualMemory* vm = owner->device->virtual_memory(); vm && vm->holds(ptr))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // On a lost device the HAL's free waits for nothing: it answers at once, deferred or not.
    if (defer && !owner->device->lost()) {
        if (ze_result_t r = free_later(owner->device, ptr); r != ZE_RESULT_SUCCESS) return r;
        ipc_openings().forget(ptr);
        return ZE_RESULT_SUCCESS;
    }
    ipc_openings().forget(ptr);  // an opened IPC handle freed as any allocation
    return owner->device->free(ptr);
}

ze_result_t zeMemFree_(ze_context_handle_t hContext, void* ptr) {
    return ze_guarded([&] { return free_allocation(hContext, ptr, false); });
}

// The memory free policies extension: no policy and BLOCKING_FREE are the free above;
// DEFER_FREE alone returns at once and frees once the commands using the memory are over.
// Both bits together are the blocking free, which also satisfies the deferred one.
ze_result_t zeMemFreeExt_(ze_context_handle_t hContext, const ze_memory_free_ext_desc_t* pMemFreeDesc, void* ptr) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        if (!pMemFreeDesc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const uint32_t known = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE |
                               ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE;
        if (pMemFreeDesc->freePolicy & ~known) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        return free_allocation(hContext, ptr,
                               pMemFreeDesc->freePolicy == ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_DEFER_FREE);
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
        if (!owner) return export_fd(props, nullptr, info, ptr);  // not zehal's memory: type unknown
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
        return export_fd(props, owner, info, ptr);
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
    ZEHAL_ENTRY(zeMemFreeExt, zeMemFreeExt_),
    ZEHAL_ENTRY(zeMemGetAllocProperties, zeMemGetAllocProperties_),
    ZEHAL_ENTRY(zeMemGetAddressRange, zeMemGetAddressRange_),
};

}  // namespace

std::span<const Entry> memory_entries() { return kEntries; }

}  // namespace zehal::ze_driver
