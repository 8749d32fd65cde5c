// IPC event pool handles (zeEventPoolGetIpcHandle): checked, then refused. The sim device's
// events are host memory of their process, and its engines learn of a signal from their own
// process only, so no device shares an event pool with another process yet
// (docs/ze_driver.md). zeEventPoolOpenIpcHandle, CloseIpcHandle and PutIpcHandle, which need
// a handle this function never gives, stay unimplemented.
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

ze_result_t zeEventPoolGetIpcHandle_(ze_event_pool_handle_t hEventPool, ze_ipc_event_pool_handle_t* phIpc) {
    return ze_guarded([&] {
        std::shared_ptr<EventPoolObject> p;
        if (ze_result_t r = event_pools().get(hEventPool, &p); r != ZE_RESULT_SUCCESS) return r;
        if (!phIpc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        // The specification's rule: only a pool created with ZE_EVENT_POOL_FLAG_IPC is shared.
        if (!(p->pool->flags() & hal::kPoolIpc)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeEventPoolGetIpcHandle, zeEventPoolGetIpcHandle_),
};

}  // namespace

std::span<const Entry> ipc_event_pool_entries() { return kEntries; }

}  // namespace zehal::ze_driver
