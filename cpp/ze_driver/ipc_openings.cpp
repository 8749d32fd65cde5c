#include "ipc_openings.hpp"

namespace zehal::ze_driver {

ze_result_t IpcOpenings::open(DeviceObject* d, int fd, const IpcMemoryHandle& h, void** out) {
    void* base = nullptr;
    const bool host = h.kind == static_cast<uint32_t>(hal::MemoryKind::host);
    const ze_result_t r = host ? d->device->import_host_dma_buf(fd, h.size, &base)
                               : d->device->import_dma_buf(fd, h.size, &base);
    if (r != ZE_RESULT_SUCCESS) return r;
    try {
        std::lock_guard lock(mu_);
        by_base_[base] = Opening{d, h.offset};
    } catch (...) {
        d->device->free(base);  // no entry to close it by: unmapped at once
        throw;
    }
    *out = static_cast<char*>(base) + h.offset;
    return ZE_RESULT_SUCCESS;
}

ze_result_t IpcOpenings::close(const void* ptr) {
    void* base = nullptr;
    DeviceObject* device = nullptr;
    {
        std::lock_guard lock(mu_);
        // The opening holding `ptr`: the last mapping starting at or before it.
        auto it = by_base_.upper_bound(ptr);
        if (it == by_base_.begin()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        --it;
        if (static_cast<const char*>(it->first) + it->second.offset != ptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        base = const_cast<void*>(it->first);
        device = it->second.device;
        // Taken out before the free, so that a second close of `ptr` finds nothing.
        by_base_.erase(it);
    }
    // Outside the lock: the free waits for commands still using the memory.
    return device->device->free(base);
}

bool IpcOpenings::forget(const void* base) {
    std::lock_guard lock(mu_);
    return by_base_.erase(base) != 0;
}

IpcOpenings& ipc_openings() {
    static auto* openings = new IpcOpenings;  // used until the process exits
    return *openings;
}

}  // namespace zehal::ze_driver
