// zeContextSystemBarrier: writes that reached a device's memory from outside it made visible to
// the device's later commands.
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// The specification's system barrier is for writes into device memory that no command of
// the device made (a NIC's RDMA writes, another device's): it waits for no queue, as no
// command is involved. The HAL flushes them where the backend can (the sim device: a memory
// fence; CUDA: cuFlushGPUDirectRDMAWrites where offered); elsewhere UNSUPPORTED_FEATURE.
ze_result_t zeContextSystemBarrier_(ze_context_handle_t hContext, ze_device_handle_t hDevice) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        return d->device->flush_inbound_writes();
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeContextSystemBarrier, zeContextSystemBarrier_),
};

}  // namespace

std::span<const Entry> system_barrier_entries() { return kEntries; }

}  // namespace zehal::ze_driver
