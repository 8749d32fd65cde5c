// IPC memory handles: an allocation of one process mapped into another (zeMemGetIpcHandle,
// zeMemOpenIpcHandle, zeMemCloseIpcHandle, zeMemPutIpcHandle) and the handle's fd
// (zeMemGetIpcHandleFromFileDescriptorExp, zeMemGetFileDescriptorFromIpcHandleExp).
#include <unistd.h>

#include <cstring>

#include "dispatch.hpp"
#include "ipc_handle.hpp"
#include "ipc_openings.hpp"
#include "memory_file.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"
#include "hal/import_fd.hpp"

namespace zehal::ze_driver {
namespace {

// The live context behind `hContext`.
ze_result_t check_context(ze_context_handle_t hContext) {
    std::shared_ptr<ContextObject> c;
    return contexts().get(hContext, &c);
}

ze_result_t zeMemGetIpcHandle_(ze_context_handle_t hContext, const void* ptr, ze_ipc_mem_handle_t* pIpcHandle) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr || !pIpcHandle) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        hal::PointerInfo info;
        DeviceObject* owner = owner_of(ptr, &info);
        if (!owner) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // not zehal's memory
        MemoryFile file;
        if (ze_result_t r = memory_file(owner, info, ptr, &file); r != ZE_RESULT_SUCCESS) return r;
        IpcMemoryHandle h;
        if (ze_result_t r = make_ipc_handle(file.fd, file.kind, file.offset, file.size, &h); r != ZE_RESULT_SUCCESS)
            return r;
        std::memcpy(pIpcHandle->data, &h, sizeof h);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeMemOpenIpcHandle_(ze_context_handle_t hContext, ze_device_handle_t hDevice, ze_ipc_mem_handle_t handle,
                                ze_ipc_memory_flags_t flags, void** pptr) {
    (void)flags;  // cache biases: hints, every bit accepted (docs/ze_driver.md)
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!pptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        IpcMemoryHandle h;
        if (ze_result_t r = read_ipc_handle(handle, &h); r != ZE_RESULT_SUCCESS) return r;
        if (!d->device->imports_any_dma_buf()) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        int fd = -1;
        if (ze_result_t r = open_ipc_file(file_of(h), &fd); r != ZE_RESULT_SUCCESS) return r;
        const ze_result_t r = ipc_openings().open(d, fd, h, pptr);
        close(fd);  // the mapping keeps the file
        return r;
    });
}

ze_result_t zeMemCloseIpcHandle_(ze_context_handle_t hContext, const void* ptr) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return ipc_openings().close(ptr);
    });
}

// Releases the exporter's side of a handle. The handle holds nothing of its own: its fd is
// the allocation's, closed by zeMemFree. So this checks that the handle is one this process
// made and changes nothing; a handle of freed memory has nothing left to release.
ze_result_t zeMemPutIpcHandle_(ze_context_handle_t hContext, ze_ipc_mem_handle_t handle) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        IpcMemoryHandle h;
        if (ze_result_t r = read_ipc_handle(handle, &h); r != ZE_RESULT_SUCCESS) return r;
        return h.pid == static_cast<int32_t>(getpid()) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
    });
}

// A handle for the dma-buf `handle` (an fd of this process, such as an allocation's export
// fd): it names the file's first byte, as device memory of the file's whole size. The fd
// stays the caller's.
ze_result_t zeMemGetIpcHandleFromFileDescriptorExp_(ze_context_handle_t hContext, uint64_t handle,
                                                    ze_ipc_mem_handle_t* pIpcHandle) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!pIpcHandle) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        uint64_t bytes = 0;
        if (handle > static_cast<uint64_t>(INT32_MAX) ||
            hal::check_import_fd(static_cast<int>(handle), &bytes) != ZE_RESULT_SUCCESS || bytes == 0)
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        IpcMemoryHandle h;
        if (ze_result_t r = make_ipc_handle(static_cast<int>(handle), static_cast<uint32_t>(hal::MemoryKind::device), 0,
                                            bytes, &h);
            r != ZE_RESULT_SUCCESS)
            return r;
        std::memcpy(pIpcHandle->data, &h, sizeof h);
        return ZE_RESULT_SUCCESS;
    });
}

// The fd a handle carries: the exporter's number (or the receiver's, written over it).
ze_result_t zeMemGetFileDescriptorFromIpcHandleExp_(ze_context_handle_t hContext, ze_ipc_mem_handle_t ipcHandle,
                                                    uint64_t* pHandle) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!pHandle) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        IpcMemoryHandle h;
        if (ze_result_t r = read_ipc_handle(ipcHandle, &h); r != ZE_RESULT_SUCCESS) return r;
        *pHandle = static_cast<uint64_t>(h.fd);
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeMemGetIpcHandle, zeMemGetIpcHandle_),
    ZEHAL_ENTRY(zeMemOpenIpcHandle, zeMemOpenIpcHandle_),
    ZEHAL_ENTRY(zeMemCloseIpcHandle, zeMemCloseIpcHandle_),
    ZEHAL_ENTRY(zeMemPutIpcHandle, zeMemPutIpcHandle_),
    ZEHAL_ENTRY(zeMemGetIpcHandleFromFileDescriptorExp, zeMemGetIpcHandleFromFileDescriptorExp_),
    ZEHAL_ENTRY(zeMemGetFileDescriptorFromIpcHandleExp, zeMemGetFileDescriptorFromIpcHandleExp_),
};

}  // namespace

std::span<const Entry> ipc_memory_entries() { return kEntries; }

}  // namespace zehal::ze_driver
