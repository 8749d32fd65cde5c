// IPC event pool handles: a pool made with ZE_EVENT_POOL_FLAG_IPC shared with another
// process (zeEventPoolGetIpcHandle, zeEventPoolOpenIpcHandle, zeEventPoolCloseIpcHandle,
// zeEventPoolPutIpcHandle). The events' state lies in the pool's file, which the handle names
// as a memory handle names an allocation's (docs/ze_driver.md, "IPC event pool handles").
#include <unistd.h>

#include <cstring>

#include "dispatch.hpp"
#include "ipc_handle.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"
#include "hal/host_event.hpp"

namespace zehal::ze_driver {
namespace {

// The live context behind `hContext`.
ze_result_t check_context(ze_context_handle_t hContext) {
    std::shared_ptr<ContextObject> c;
    return contexts().get(hContext, &c);
}

// The device an opened pool is recorded under: the first that shares event pools (its
// queues wait for and signal the opened events); null when none does.
DeviceObject* sharing_device() {
    for (const auto& d : driver()->devices)
        if (d->device->properties().ipc_event_pools) return d.get();
    return nullptr;
}

ze_result_t zeEventPoolGetIpcHandle_(ze_event_pool_handle_t hEventPool, ze_ipc_event_pool_handle_t* phIpc) {
    return ze_guarded([&] {
        std::shared_ptr<EventPoolObject> p;
        if (ze_result_t r = event_pools().get(hEventPool, &p); r != ZE_RESULT_SUCCESS) return r;
        if (!phIpc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // The specification's rule: only a pool created with ZE_EVENT_POOL_FLAG_IPC is shared.
        if (!(p->pool->flags() & hal::kPoolIpc)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        // A pool of a device that shares none (a CUDA device's), or one opened from another
        // process's handle, has no file of its own to hand out: UNSUPPORTED_FEATURE.
        int fd = -1;
        uint64_t bytes = 0;
        if (ze_result_t r = p->pool->ipc_file(&fd, &bytes); r != ZE_RESULT_SUCCESS) return r;
        IpcEventPoolHandle h;
        if (ze_result_t r = make_ipc_handle(fd, bytes, &h); r != ZE_RESULT_SUCCESS) return r;
        std::memcpy(phIpc->data, &h, sizeof h);
        return ZE_RESULT_SUCCESS;
    });
}

ze_result_t zeEventPoolOpenIpcHandle_(ze_context_handle_t hContext, ze_ipc_event_pool_handle_t hIpc,
                                      ze_event_pool_handle_t* phEventPool) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        if (!phEventPool) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        IpcEventPoolHandle h;
        if (ze_result_t r = read_ipc_handle(hIpc, &h); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = sharing_device();
        if (!d) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        int fd = -1;
        if (ze_result_t r = open_ipc_file(file_of(h), &fd); r != ZE_RESULT_SUCCESS) return r;
        std::shared_ptr<hal::EventPool> pool;
        const ze_result_t r = hal::open_ipc_event_pool(fd, &pool);
        close(fd);  // the mapping keeps the file
        if (r != ZE_RESULT_SUCCESS) return r;
        auto object = std::make_shared<EventPoolObject>();
        object->pool = std::move(pool);
        object->device = d;
        object->made_for = {d};
        object->context = hContext;
        // The driver's pool flags are the HAL's bits (event_api.cpp passes them through).
        object->flags = object->pool->flags();
        object->opened = true;
        *phEventPool = to_handle<ze_event_pool_handle_t>(event_pools().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

// Closes a pool that zeEventPoolOpenIpcHandle opened (INVALID_ARGUMENT for one this process
// created: zeEventPoolDestroy's). Events created from it keep its state until destroyed.
ze_result_t zeEventPoolCloseIpcHandle_(ze_event_pool_handle_t hEventPool) {
    return ze_guarded([&] {
        std::shared_ptr<EventPoolObject> p;
        if (ze_result_t r = event_pools().get(hEventPool, &p); r != ZE_RESULT_SUCCESS) return r;
        if (!p->opened) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        event_pools().remove(hEventPool);
        return ZE_RESULT_SUCCESS;
    });
}

// Releases the exporter's side of a handle. The handle holds nothing of its own (its fd is
// the pool's, closed with the pool), so this checks that it is one this process made.
ze_result_t zeEventPoolPutIpcHandle_(ze_context_handle_t hContext, ze_ipc_event_pool_handle_t hIpc) {
    return ze_guarded([&] {
        if (ze_result_t r = check_context(hContext); r != ZE_RESULT_SUCCESS) return r;
        IpcEventPoolHandle h;
        if (ze_result_t r = read_ipc_handle(hIpc, &h); r != ZE_RESULT_SUCCESS) return r;
        return h.pid == static_cast<int32_t>(getpid()) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeEventPoolGetIpcHandle, zeEventPoolGetIpcHandle_),
    ZEHAL_ENTRY(zeEventPoolOpenIpcHandle, zeEventPoolOpenIpcHandle_),
    ZEHAL_ENTRY(zeEventPoolCloseIpcHandle, zeEventPoolCloseIpcHandle_),
    ZEHAL_ENTRY(zeEventPoolPutIpcHandle, zeEventPoolPutIpcHandle_),
};

}  // namespace

std::span<const Entry> ipc_event_pool_entries() { return kEntries; }

}  // namespace zehal::ze_driver
