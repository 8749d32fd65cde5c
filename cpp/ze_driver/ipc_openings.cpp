#include "ipc_openings.hpp"

namespace zehal::ze_driver {

ze_result_t IpcOpenings::open(DeviceObject* d, int fd, const IpcMemoryHandle& h, void** out) {
    void* base = nullptr;
    const bool host = h.kind == static_cast<uint32_t>(hal::MemoryKind::host);
    const ze_result_t r = host ? d->device->import_host_dma_buf(fd, h.size, &base)
                               : d->device->import_dma_buf(fd, h.size, &base);
    if (r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(mu_);
    by_base_[base] = Opening{d, h.offset};
    *out = static_cast<char*>(base) + h.offset;
    return ZE_RESULT_SUCCESS;
}

ze_result_t IpcOpenings::close(const void* ptr) {
    std::lock_guard lock(mu_);
    // The opening holding `ptr`: the last mapping starting at or before it.
    auto it = by_base_.upper_bound(ptr);
    if (it == by_base_.begin()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    --it;
    if (static_cast<const char*>(it->first) + it->second.offset != ptr) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // Freed under the lock, so that two closes of one pointer cannot both free it.
    const ze_result_t r = it->second.device->device->free(const_cast<void*>(it->first));
    if (r == ZE_RESULT_SUCCESS) by_base_.erase(it);
    return r;
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
