#include "hal/device.hpp"

#include <bit>

namespace zehal::hal {

namespace {

bool known_kind(MemoryKind kind) {
    return kind == MemoryKind::host || kind == MemoryKind::device || kind == MemoryKind::shared;
}

// The checks allocate and allocate_exportable share after the lost device and the null
// output: `*alignment` 0 becomes kDefaultAlignment.
ze_result_t check_allocation(const DeviceProperties& props, MemoryKind kind, size_t size, size_t* alignment,
                             uint32_t ordinal) {
    if (ordinal >= props.memory_ordinals) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (*alignment == 0) *alignment = Device::kDefaultAlignment;
    if (!std::has_single_bit(*alignment) || *alignment > Device::kMaxAlignment)
        return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (kind != MemoryKind::host && size > props.max_allocation_bytes) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    return ZE_RESULT_SUCCESS;
}

// Engines of group `ordinal` (none for an ordinal the HAL does not know).
uint32_t engines_of(const DeviceProperties& props, uint32_t ordinal) {
    if (ordinal == kComputeOrdinal) return props.compute_engines;
    if (ordinal == kCopyOrdinal) return props.copy_engines;
    return 0;
}

// The checks of import_dma_buf and import_host_dma_buf.
ze_result_t check_import(const Device& device, int fd, size_t size, void** out) {
    if (device.lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (fd < 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t Device::allocate(MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal,
                             void** out) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!known_kind(kind) || (flags & ~kValidAllocationFlags)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (ze_result_t r = check_allocation(properties(), kind, size, &alignment, ordinal); r != ZE_RESULT_SUCCESS)
        return r;
    return do_allocate(kind, size, alignment, flags, ordinal, out);
}

ze_result_t Device::allocate_exportable(MemoryKind kind, size_t size, size_t alignment, uint32_t flags,
                                        uint32_t ordinal, void** out) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!known_kind(kind) || (flags & ~kValidAllocationFlags)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (!(exportable_kinds() & (1u << static_cast<uint32_t>(kind)))) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (ze_result_t r = check_allocation(properties(), kind, size, &alignment, ordinal); r != ZE_RESULT_SUCCESS)
        return r;
    return do_allocate_exportable(kind, size, alignment, flags, ordinal, out);
}

ze_result_t Device::free(void* ptr) {
    if (!ptr) return lost() ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (lost() && !frees_when_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    const ze_result_t r = do_free(ptr);
    // Lost before or while the memory went back: the answer of every call of a lost device.
    return lost() ? ZE_RESULT_ERROR_DEVICE_LOST : r;
}

ze_result_t Device::pointer_info(const void* ptr, PointerInfo* out) const {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!ptr || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_pointer_info(ptr, out);
}

ze_result_t Device::check_operand(const void* ptr, size_t size) const {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return do_check_operand(ptr, size);
}

ze_result_t Device::create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<Queue>* out) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (index >= engines_of(properties(), ordinal)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return do_create_queue(ordinal, index, out);
}

ze_result_t Device::create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<EventPool>* out) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (flags & ~kPoolValidFlags) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    const uint32_t caps = properties().timestamp_flags;
    if ((flags & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp)) && !(caps & kTimestampKernel))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if ((flags & kPoolKernelMappedTimestamp) && !(caps & kTimestampSynchronized))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return do_create_event_pool(count, flags, out);
}

ze_result_t Device::create_module(ModuleFormat format, std::span<const uint8_t> binary, std::string_view build_flags,
                                  std::shared_ptr<Module>* out, std::string* log) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (format != ModuleFormat::spirv && format != ModuleFormat::native) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (binary.empty()) return ZE_RESULT_ERROR_INVALID_SIZE;
    std::string scratch;
    return do_create_module(format, binary, build_flags, out, log ? log : &scratch);
}

ze_result_t Device::record_on_stream(uintptr_t stream, const EventRef& event, StreamMark mark) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!owns_event(*event)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!(event->pool().flags() & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp)))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (mark != StreamMark::start && mark != StreamMark::end) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    return do_record_on_stream(stream, event, mark);
}

ze_result_t Device::global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!host_ns || !device_ticks) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_global_timestamps(host_ns, device_ticks);
}

ze_result_t Device::export_dma_buf(uint32_t group, int* fd, size_t* size) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!fd || !size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const std::vector<MetricGroupInfo>& groups = metric_groups();
    if (group >= groups.size() || !(groups[group].type_flags & kGroupExportDmaBuf))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!properties().dma_buf_export) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    return do_export_dma_buf(group, fd, size);
}

ze_result_t Device::import_dma_buf(int fd, size_t size, void** out) {
    if (ze_result_t r = check_import(*this, fd, size, out); r != ZE_RESULT_SUCCESS) return r;
    return do_import_dma_buf(fd, size, out);
}

ze_result_t Device::import_host_dma_buf(int fd, size_t size, void** out) {
    if (ze_result_t r = check_import(*this, fd, size, out); r != ZE_RESULT_SUCCESS) return r;
    return do_import_host_dma_buf(fd, size, out);
}

ze_result_t Device::export_allocation(const void* base, int* fd) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (exportable_kinds() == 0) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (!base || !fd) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_export_allocation(base, fd);
}

ze_result_t Device::peer_properties(const Device& other, PeerProperties* out) const {
    if (lost() || other.lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_peer_properties(other, out);
}

ze_result_t Device::lose() {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return do_lose();
}

ze_result_t Device::do_record_on_stream(uintptr_t, const EventRef&, StreamMark) {
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ze_result_t Device::do_import_host_dma_buf(int, size_t, void**) { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

ze_result_t Device::do_allocate_exportable(MemoryKind, size_t, size_t, uint32_t, uint32_t, void**) {
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ze_result_t Device::do_export_allocation(const void*, int*) { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

ze_result_t Device::do_peer_properties(const Device& other, PeerProperties* out) const {
    *out = PeerProperties{};
    out->access = can_access_peer(other);
    return ZE_RESULT_SUCCESS;
}

ze_result_t Device::do_lose() { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

}  // namespace zehal::hal
