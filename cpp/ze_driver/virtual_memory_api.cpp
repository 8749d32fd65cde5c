// Virtual memory: reservations of address space, physical memory objects (device or host)
// and mappings between them with an access (hal/virtual_memory.hpp holds the rules).
#include <memory>

#include "chain.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// ze_physical_mem_flag_t bits: ALLOCATE_ON_DEVICE (the default) and ALLOCATE_ON_HOST (API 1.13).
constexpr uint32_t kAllocateOnDevice = 1u << 0;
constexpr uint32_t kAllocateOnHost = 1u << 1;

// A physical memory object of the virtual memory of `device`.
struct PhysicalMemoryObject {
    std::shared_ptr<hal::PhysicalMemory> memory;
    DeviceObject* device;
};

HandleTable<PhysicalMemoryObject>& physical_memories() {
    static auto* t = new HandleTable<PhysicalMemoryObject>(ZE_RESULT_ERROR_INVALID_NULL_HANDLE);  // until exit
    return *t;
}

ze_result_t check_context(ze_context_handle_t hContext) {
    std::shared_ptr<ContextObject> c;
    return contexts().get(hContext, &c);
}

// The first device with virtual memory: where reservations and host physical memory are made.
DeviceObject* first_with_virtual_memory() {
    DriverObject* drv = driver();
    if (!drv) return nullptr;
    for (const auto& d : drv->devices)
        if (d->device->virtual_memory()) return d.get();
    return nullptr;
}

// The virtual memory that holds `ptr`, or else the first device's (which answers the error
// for a pointer it does not hold); UNSUPPORTED_FEATURE when no device has virtual memory.
ze_result_t virtual_memory_of(const void* ptr, hal::VirtualMemory** out) {
    if (DriverObject* drv = driver())
        for (const auto& d : drv->devices)
            if (hal::VirtualMemory* vm = d->device->virtual_memory(); vm && vm->holds(ptr)) {
                *out = vm;
                return ZE_RESULT_SUCCESS;
            }
    DeviceObject* first = first_with_virtual_memory();
    if (!first) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    *out = first->device->virtual_memory();
    return ZE_RESULT_SUCCESS;
}

ze_result_t zeVirtualMemReserve_(ze_context_handle_t hContext, const void* pStart, size_t size, void** pptr) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = first_with_virtual_memory();
        if (!d) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        return d->device->virtual_memory()->reserve(pStart, size, pptr);
    });
}

ze_result_t zeVirtualMemFree_(ze_context_handle_t hContext, const void* ptr, size_t size) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::VirtualMemory* vm = nullptr;
        if (ze_result_t r = virtual_memory_of(ptr, &vm); r != ZE_RESULT_SUCCESS) return r;
        return vm->free(ptr, size);
    });
}

ze_result_t zeVirtualMemQueryPageSize_(ze_context_handle_t hContext, ze_device_handle_t hDevice, size_t size,
                                       size_t* pagesize) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        hal::VirtualMemory* vm = d->device->virtual_memory();
        if (!vm) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        return vm->page_size(size, pagesize);
    });
}

ze_result_t zePhysicalMemCreate_(ze_context_handle_t hContext, ze_device_handle_t hDevice, ze_physical_mem_desc_t* desc,
                                 ze_physical_mem_handle_t* phPhysicalMemory) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phPhysicalMemory) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (desc->flags & ~(kAllocateOnDevice | kAllocateOnHost)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        const bool on_host = desc->flags & kAllocateOnHost;
        if (on_host && (desc->flags & kAllocateOnDevice)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        // Host memory needs no device: the first one with virtual memory makes it.
        DeviceObject* d = nullptr;
        if (hDevice || !on_host) {
            if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        } else {
            d = first_with_virtual_memory();
        }
        hal::VirtualMemory* vm = d ? d->device->virtual_memory() : nullptr;
        if (!vm) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        auto object = std::make_shared<PhysicalMemoryObject>();
        object->device = d;
        const hal::MemoryKind kind = on_host ? hal::MemoryKind::host : hal::MemoryKind::device;
        // A dma-buf imported as device physical memory (ze_external_memory_import_fd_t).
        const auto* import = find_in_chain<const ze_external_memory_import_fd_t>(
            desc, {ZE_STRUCTURE_TYPE_PHYSICAL_MEM_DESC}, ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD);
        if (import && import->flags != ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF)
            return ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION;
        if (import && on_host) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        const ze_result_t made = import ? vm->import_physical(import->fd, desc->size, &object->memory)
                                        : vm->create_physical(kind, desc->size, &object->memory);
        if (made != ZE_RESULT_SUCCESS) return made;
        *phPhysicalMemory = to_handle<ze_physical_mem_handle_t>(physical_memories().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zePhysicalMemDestroy_(ze_context_handle_t hContext, ze_physical_mem_handle_t hPhysicalMemory) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        std::shared_ptr<PhysicalMemoryObject> object;
        if (ze_result_t r = physical_memories().get(hPhysicalMemory, &object); r != ZE_RESULT_SUCCESS) return r;
        // The check on a copy of the reference: the handle's own goes with the handle.
        std::shared_ptr<hal::PhysicalMemory> memory = object->memory;
        if (ze_result_t r = object->device->device->virtual_memory()->destroy_physical(&memory); r != ZE_RESULT_SUCCESS)
            return r;
        physical_memories().remove(hPhysicalMemory);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeVirtualMemMap_(ze_context_handle_t hContext, const void* ptr, size_t size,
                             ze_physical_mem_handle_t hPhysicalMemory, size_t offset,
                             ze_memory_access_attribute_t access) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        std::shared_ptr<PhysicalMemoryObject> object;
        if (ze_result_t r = physical_memories().get(hPhysicalMemory, &object); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::VirtualMemory* vm = nullptr;
        if (ze_result_t r = virtual_memory_of(ptr, &vm); r != ZE_RESULT_SUCCESS) return r;
        return vm->map(ptr, size, object->memory, offset, static_cast<hal::MemoryAccess>(access));
    });
}

ze_result_t zeVirtualMemUnmap_(ze_context_handle_t hContext, const void* ptr, size_t size) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::VirtualMemory* vm = nullptr;
        if (ze_result_t r = virtual_memory_of(ptr, &vm); r != ZE_RESULT_SUCCESS) return r;
        return vm->unmap(ptr, size);
    });
}

ze_result_t zeVirtualMemSetAccessAttribute_(ze_context_handle_t hContext, const void* ptr, size_t size,
                                            ze_memory_access_attribute_t access) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::VirtualMemory* vm = nullptr;
        if (ze_result_t r = virtual_memory_of(ptr, &vm); r != ZE_RESULT_SUCCESS) return r;
        return vm->set_access(ptr, size, static_cast<hal::MemoryAccess>(access));
    });
}

ze_result_t zeVirtualMemGetAccessAttribute_(ze_context_handle_t hContext, const void* ptr, size_t size,
                                            ze_memory_access_attribute_t* access, size_t* outSize) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr || !access || !outSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::VirtualMemory* vm = nullptr;
        if (ze_result_t r = virtual_memory_of(ptr, &vm); r != ZE_RESULT_SUCCESS) return r;
        hal::MemoryAccess got = hal::MemoryAccess::none;
        if (ze_result_t r = vm->get_access(ptr, size, &got, outSize); r != ZE_RESULT_SUCCESS) return r;
        *access = static_cast<ze_memory_access_attribute_t>(got);
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeVirtualMemReserve, zeVirtualMemReserve_),
    ZEHAL_ENTRY(zeVirtualMemFree, zeVirtualMemFree_),
    ZEHAL_ENTRY(zeVirtualMemQueryPageSize, zeVirtualMemQueryPageSize_),
    ZEHAL_ENTRY(zePhysicalMemCreate, zePhysicalMemCreate_),
    ZEHAL_ENTRY(zePhysicalMemDestroy, zePhysicalMemDestroy_),
    ZEHAL_ENTRY(zeVirtualMemMap, zeVirtualMemMap_),
    ZEHAL_ENTRY(zeVirtualMemUnmap, zeVirtualMemUnmap_),
    ZEHAL_ENTRY(zeVirtualMemSetAccessAttribute, zeVirtualMemSetAccessAttribute_),
    ZEHAL_ENTRY(zeVirtualMemGetAccessAttribute, zeVirtualMemGetAccessAttribute_),
};

}  // namespace

std::span<const Entry> virtual_memory_entries() { return kEntries; }

}  // namespace zehal::ze_driver
