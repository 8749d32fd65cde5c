// What the devices of one Level Zero driver share: the loader table, the driver, one
// context, the extension functions it resolves, and the backend's host memory.
#pragma once

#include <memory>
#include <string>

#include "hal/host_memory.hpp"
#include "hal/level_zero/ze_api.hpp"

namespace zehal::level_zero {

// Host memory of the backend (zeMemAllocHost of any driver's context; Allocation::tag holds
// that context): allocated and freed through any level_zero device, usable by every device
// of every backend (contract §2.2). One per backend.
struct HostMemory {
    hal::HostMemoryRegistry registry{"level_zero"};
};

// One driver and the context zehal uses on it; lives until the process exits (as the
// devices made from it do).
struct DriverContext {
    explicit DriverContext(const ZeApi& api) : api(api) {}
    const ZeApi& api;
    ze_driver_handle_t driver = nullptr;
    ze_context_handle_t context = nullptr;
    std::shared_ptr<HostMemory> host;
    // zeEventQueryKernelTimestampsExt of this driver, or null with the reason.
    ZeEventQueryKernelTimestampsExtFn query_timestamps_ext = nullptr;
    std::string timestamps_ext_why;
    // zeCommandListHostSynchronize (loader or driver), or null: queues then synchronize
    // through a barrier and an event of their own.
    ZeCommandListHostSynchronizeFn list_host_synchronize = nullptr;
};

// Creates the context of `driver` and resolves its extension functions; null with *why.
std::shared_ptr<DriverContext> open_driver(const ZeApi& api, ze_driver_handle_t driver,
                                           std::shared_ptr<HostMemory> host, std::string* why);

}  // namespace zehal::level_zero
