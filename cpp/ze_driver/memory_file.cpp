#include "memory_file.hpp"

namespace zehal::ze_driver {

ze_result_t memory_file(DeviceObject* owner, const hal::PointerInfo& info, const void* ptr, MemoryFile* out) {
    if (hal::VirtualMemory* vm = owner->device->virtual_memory(); vm && vm->holds(ptr)) {
        std::shared_ptr<hal::PhysicalMemory> physical;
        size_t offset = 0;
        if (ze_result_t r = vm->physical_at(ptr, &physical, &offset); r != ZE_RESULT_SUCCESS) return r;
        if (physical->file() < 0) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        // The file lives as long as the physical memory, which *out holds.
        out->fd = physical->file();
        out->kind = static_cast<uint32_t>(physical->kind());
        out->offset = offset;
        out->size = physical->size();
        out->physical = std::move(physical);
        return ZE_RESULT_SUCCESS;
    }
    int fd = -1;
    if (ze_result_t r = owner->device->export_allocation(info.base, &fd); r != ZE_RESULT_SUCCESS)
        return r == ZE_RESULT_ERROR_DEVICE_LOST ? r : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    const auto offset = static_cast<uint64_t>(static_cast<const char*>(ptr) - static_cast<const char*>(info.base));
    *out = MemoryFile{fd, static_cast<uint32_t>(info.kind), offset, info.size, nullptr};
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::ze_driver
