// The IPC memory handles this process has opened: each a mapping of another allocation's
// file, made by zeMemOpenIpcHandle and undone by zeMemCloseIpcHandle (or zeMemFree).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "ipc_handle.hpp"
#include "objects.hpp"

namespace zehal::ze_driver {

// Thread-safe.
class IpcOpenings {
public:
    // Maps the allocation handle `h` names, from file `fd` (the caller keeps it), as memory of
    // device `d`: device memory for device and shared allocations, host memory for host ones.
    // *out is the handle's pointer (the mapping's start plus the handle's offset).
    ze_result_t open(DeviceObject* d, int fd, const IpcMemoryHandle& h, void** out);
    // Unmaps the opening whose pointer zeMemOpenIpcHandle returned as `ptr`; INVALID_ARGUMENT
    // for any other pointer (never opened, already closed, interior).
    ze_result_t close(const void* ptr);
    // Forgets the opening mapped at `base`, which zeMemFree is freeing; false when `base` is
    // no opening.
    bool forget(const void* base);

private:
    struct Opening {
        DeviceObject* device;
        uint64_t offset;  // of the pointer handed out, from the mapping's start
    };
    std::mutex mu_;
    std::map<const void*, Opening> by_base_;  // guarded by mu_
};

// The process's openings.
IpcOpenings& ipc_openings();

}  // namespace zehal::ze_driver
