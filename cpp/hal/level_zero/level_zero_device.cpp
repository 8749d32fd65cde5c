#include "hal/level_zero/level_zero_device.hpp"

#include <algorithm>
#include <cstring>

#include "hal/level_zero/ext_types.hpp"
#include "hal/level_zero/level_zero_event.hpp"
#include "hal/level_zero/level_zero_module.hpp"
#include "hal/level_zero/level_zero_queue.hpp"

namespace zehal::level_zero {

namespace {

// The alignment an imported dma-buf is documented with (Level Zero's import alignment).
constexpr size_t kImportAlignment = 4096;
// Allocation flags passed on to the driver (the bias bits every version of the API knows).
constexpr uint32_t kDriverAllocationFlags = 0x3;

void append_limit(std::string* limits, const std::string& why) {
    if (!limits->empty()) *limits += "; ";
    *limits += why;
}

// Frees `p` once no command uses it: zeMemFreeExt with the blocking free policy where the
// loader and the driver have it, else zeMemFree (which waits so on Intel's driver).
ze_result_t free_when_unused(const ZeApi& api, ze_context_handle_t ctx, void* p) {
    if (api.zeMemFreeExt) {
        ze_memory_free_ext_desc_t desc{};
        desc.stype = ZE_STRUCTURE_TYPE_MEMORY_FREE_EXT_DESC;
        desc.freePolicy = ZE_DRIVER_MEMORY_FREE_POLICY_EXT_FLAG_BLOCKING_FREE;
        if (api.zeMemFreeExt(ctx, &desc, p) == ZE_RESULT_SUCCESS) return ZE_RESULT_SUCCESS;
    }
    return api.zeMemFree(ctx, p);
}

}  // namespace

ZeDevice::ZeDevice(std::shared_ptr<DriverContext> driver, ze_device_handle_t device)
    : driver_(std::move(driver)),
      device_(device) {}

ZeDevice::~ZeDevice() {
    for (const hal::Allocation& a : memory_.take_all()) api().zeMemFree(driver_->context, a.info.base);
}

bool ZeDevice::describe(std::string* why) {
    ze_device_properties_t p{};
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;  // timerResolution in Hz
    KernelTimestampsExtProperties ts{};
    if (driver_->query_timestamps_ext) p.pNext = &ts;
    if (ze_result_t r = api().zeDeviceGetProperties(device_, &p); r != ZE_RESULT_SUCCESS) {
        *why = "zeDeviceGetProperties failed: " + result_text(r);
        return false;
    }
    if (p.type != ZE_DEVICE_TYPE_GPU) {
        *why = std::string("Level Zero device ") + p.name + " is not a GPU";
        return false;
    }
    props_.name = p.name;
    // Passed through: the driver below answers for its own devices.
    props_.indirect_launches = true;
    std::copy(std::begin(p.uuid.id), std::end(p.uuid.id), props_.uuid.begin());
    props_.max_allocation_bytes = p.maxMemAllocSize;
    props_.timer_hz = p.timerResolution;
    props_.kernel_timestamp_valid_bits = p.kernelTimestampValidBits;
    props_.timestamp_valid_bits = p.timestampValidBits;
    if (driver_->query_timestamps_ext) {
        if (ts.flags & kKernelTimestampsExtFlagKernel) props_.timestamp_flags |= hal::kTimestampKernel;
        if (ts.flags & kKernelTimestampsExtFlagSynchronized) props_.timestamp_flags |= hal::kTimestampSynchronized;
    } else {
        // Core zeEventQueryKernelTimestamp gives ticks; host ns need the extension.
        props_.timestamp_flags = hal::kTimestampKernel;
        append_limit(&props_.limits, "no synchronized timestamps: " + driver_->timestamps_ext_why);
    }
    if (!describe_engines(why)) return false;
    describe_compute(api(), device_, &props_);
    describe_metrics();
    return true;
}

bool ZeDevice::describe_engines(std::string* why) {
    uint32_t count = 0;
    ze_result_t r = api().zeDeviceGetCommandQueueGroupProperties(device_, &count, nullptr);
    std::vector<ze_command_queue_group_properties_t> groups(count);
    for (auto& g : groups) g.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    if (r == ZE_RESULT_SUCCESS) r = api().zeDeviceGetCommandQueueGroupProperties(device_, &count, groups.data());
    if (r != ZE_RESULT_SUCCESS) {
        *why = "zeDeviceGetCommandQueueGroupProperties failed: " + result_text(r);
        return false;
    }
    bool compute = false, copy = false;
    for (uint32_t i = 0; i < count; ++i) {
        const auto flags = groups[i].flags;
        if (!compute && (flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE)) {
            compute = true;
            compute_group_ = i;
            props_.compute_engines = groups[i].numQueues;
        } else if (!copy && (flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY) &&
                   !(flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE)) {
            copy = true;
            copy_group_ = i;
            props_.copy_engines = groups[i].numQueues;
        }
    }
    if (!compute || props_.compute_engines == 0) {
        *why = "Level Zero device " + props_.name + " has no compute engine group";
        return false;
    }
    if (!copy) props_.copy_engines = 0;

    uint32_t memories = 0;
    r = api().zeDeviceGetMemoryProperties(device_, &memories, nullptr);
    std::vector<ze_device_memory_properties_t> mems(memories);
    for (auto& m : mems) m.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_PROPERTIES;
    if (r == ZE_RESULT_SUCCESS && memories) r = api().zeDeviceGetMemoryProperties(device_, &memories, mems.data());
    if (r != ZE_RESULT_SUCCESS) {
        *why = "zeDeviceGetMemoryProperties failed: " + result_text(r);
        return false;
    }
    props_.memory_ordinals = std::max<uint32_t>(memories, 1);
    props_.memory_bytes = memories ? mems[0].totalSize : 0;
    props_.memory_bus_width_bits = memories ? mems[0].maxBusWidth : 0;
    props_.memory_clock_mhz = memories ? mems[0].maxClockRate : 0;

    ze_device_memory_access_properties_t access{};
    access.stype = ZE_STRUCTURE_TYPE_DEVICE_MEMORY_ACCESS_PROPERTIES;
    props_.kernels_use_system_memory = api().zeDeviceGetMemoryAccessProperties(device_, &access) == ZE_RESULT_SUCCESS &&
                                       (access.sharedSystemAllocCapabilities & ZE_MEMORY_ACCESS_CAP_FLAG_RW) ==
                                           ZE_MEMORY_ACCESS_CAP_FLAG_RW;

    ze_device_external_memory_properties_t ext{};
    ext.stype = ZE_STRUCTURE_TYPE_DEVICE_EXTERNAL_MEMORY_PROPERTIES;
    dma_buf_import_ = api().zeDeviceGetExternalMemoryProperties(device_, &ext) == ZE_RESULT_SUCCESS &&
                      (ext.memoryAllocationImportTypes & ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF);
    if (!dma_buf_import_) append_limit(&props_.limits, "no dma-buf import");
    return true;
}

void ZeDevice::describe_metrics() {
    std::string why;
    if (!describe_metric_groups(api(), device_, &groups_, &why)) {
        groups_ = {};
        append_limit(&props_.limits, "no metric groups: " + why);
    }
    for (size_t i = 0; i < groups_.infos.size() && !props_.dma_buf_export; ++i) {
        if (!(groups_.infos[i].type_flags & hal::kGroupExportDmaBuf)) continue;
        int fd = -1;
        size_t size = 0;
        props_.dma_buf_export = export_group_memory(api(), groups_.handles[i], &fd, &size) == ZE_RESULT_SUCCESS;
    }
    append_limit(&props_.limits, "no tracer: the metric tracer is not mapped by the level_zero backend yet");
}

ze_result_t ZeDevice::check(ze_result_t r) noexcept {
    // Release: a thread that sees the device lost sees why.
    if (r == ZE_RESULT_ERROR_DEVICE_LOST) lost_.store(true, std::memory_order_release);
    return r;
}

hal::OperandCache ZeDevice::operand_cache() const noexcept {
    return hal::OperandCache(memory_, driver_->host->registry);
}

ze_result_t ZeDevice::do_allocate(hal::MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal,
                                  void** out) {
    ze_device_mem_alloc_desc_t device_desc{};
    device_desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
    device_desc.flags = flags & kDriverAllocationFlags;
    device_desc.ordinal = ordinal;
    ze_host_mem_alloc_desc_t host_desc{};
    host_desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    host_desc.flags = flags & kDriverAllocationFlags;
    const ze_context_handle_t ctx = driver_->context;
    void* p = nullptr;
    ze_result_t r = ZE_RESULT_SUCCESS;
    switch (kind) {
        case hal::MemoryKind::host:
            r = api().zeMemAllocHost(ctx, &host_desc, size, alignment, &p);
            break;
        case hal::MemoryKind::device:
            r = api().zeMemAllocDevice(ctx, &device_desc, size, alignment, device_, &p);
            break;
        case hal::MemoryKind::shared:
            r = api().zeMemAllocShared(ctx, &device_desc, &host_desc, size, alignment, device_, &p);
            break;
    }
    if (r != ZE_RESULT_SUCCESS) return check(r);
    hal::Allocation a;
    a.info.kind = kind;
    a.info.base = p;
    a.info.size = size;
    a.info.alignment = alignment;
    a.mapping = p;
    a.mapping_bytes = size;
    a.tag = reinterpret_cast<uint64_t>(ctx);
    const bool host = kind == hal::MemoryKind::host;
    if (r = host ? driver_->host->registry.insert(a) : memory_.insert(a); r != ZE_RESULT_SUCCESS) {
        api().zeMemFree(ctx, p);
        return r;
    }
    *out = p;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZeDevice::do_free(void* ptr) {
    hal::Allocation a;
    if (memory_.remove(ptr, &a) || driver_->host->registry.remove(ptr, &a)) {
        // Host memory may come from another driver's context: the tag names it.
        return check(free_when_unused(api(), reinterpret_cast<ze_context_handle_t>(a.tag), a.info.base));
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t ZeDevice::do_check_operand(const void* ptr, size_t size) const {
    hal::Operand operand;
    return operand_cache().find(ptr, size, &operand);
}

ze_result_t ZeDevice::do_pointer_info(const void* ptr, hal::PointerInfo* out) const {
    hal::Allocation a;
    if (!memory_.find(ptr, &a) && !driver_->host->registry.find(ptr, &a)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = a.info;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZeDevice::do_create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<hal::Queue>* out) {
    return ZeQueue::create(std::static_pointer_cast<ZeDevice>(shared_from_this()), ordinal, index, out);
}

ze_result_t ZeDevice::do_create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<hal::EventPool>* out) {
    return ZeEventPool::create(std::static_pointer_cast<ZeDevice>(shared_from_this()), count, flags, out);
}

ze_result_t ZeDevice::do_global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) {
    return check(api().zeDeviceGetGlobalTimestamps(device_, host_ns, device_ticks));
}

ze_result_t ZeDevice::do_export_dma_buf(uint32_t group, int* fd, size_t* size) {
    return check(export_group_memory(api(), groups_.handles[group], fd, size));
}

ze_result_t ZeDevice::do_import_dma_buf(int fd, size_t size, void** out) {
    // A device that exports its metric memory as a dma-buf takes that back even where its
    // driver reports no general dma-buf import (zehal's own driver on a CUDA device); the
    // driver refuses any other fd.
    if (!dma_buf_import_ && !props_.dma_buf_export) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    ze_external_memory_import_fd_t import{};
    import.stype = ZE_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMPORT_FD;
    import.flags = ZE_EXTERNAL_MEMORY_TYPE_FLAG_DMA_BUF;
    import.fd = fd;
    ze_device_mem_alloc_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC;
    desc.pNext = &import;
    void* p = nullptr;
    if (ze_result_t r = api().zeMemAllocDevice(driver_->context, &desc, size, kImportAlignment, device_, &p);
        r != ZE_RESULT_SUCCESS)
        return check(r);
    hal::Allocation a;
    a.info.kind = hal::MemoryKind::device;
    a.info.base = p;
    a.info.size = size;
    a.info.alignment = kImportAlignment;
    a.info.imported = true;
    a.mapping = p;
    a.mapping_bytes = size;
    a.tag = reinterpret_cast<uint64_t>(driver_->context);
    if (ze_result_t r = memory_.insert(a); r != ZE_RESULT_SUCCESS) {
        api().zeMemFree(driver_->context, p);
        return r;
    }
    *out = p;
    return ZE_RESULT_SUCCESS;
}

namespace {
// `other` as a device of the same driver as `self`, else null.
const ZeDevice* same_driver(const ZeDevice& self, const hal::Device& other) {
    const auto* peer = dynamic_cast<const ZeDevice*>(&other);
    return peer && peer->driver().driver == self.driver().driver ? peer : nullptr;
}
}  // namespace

bool ZeDevice::can_access_peer(const hal::Device& other) const {
    const ZeDevice* peer = same_driver(*this, other);
    if (!peer) return false;
    if (peer == this) return true;
    ze_bool_t can = false;
    return api().zeDeviceCanAccessPeer(device_, peer->device_, &can) == ZE_RESULT_SUCCESS && can;
}

ze_result_t ZeDevice::do_peer_properties(const hal::Device& other, hal::PeerProperties* out) const {
    *out = hal::PeerProperties{};
    const ZeDevice* peer = same_driver(*this, other);
    if (!peer) return ZE_RESULT_SUCCESS;
    ze_device_p2p_properties_t p2p{};
    p2p.stype = ZE_STRUCTURE_TYPE_DEVICE_P2P_PROPERTIES;
    if (ze_result_t r = api().zeDeviceGetP2PProperties(device_, peer->device_, &p2p); r != ZE_RESULT_SUCCESS) return r;
    out->access = (p2p.flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS) != 0 || peer == this;
    out->atomics = (p2p.flags & ZE_DEVICE_P2P_PROPERTY_FLAG_ATOMICS) != 0 || peer == this;
    return ZE_RESULT_SUCCESS;
}

bool ZeDevice::copies_peer_memory(const hal::Device& other) const { return same_driver(*this, other) != nullptr; }

bool ZeDevice::owns_event(const hal::Event& event) const noexcept {
    const auto* e = dynamic_cast<const ZeEvent*>(&event);
    return e && &e->device() == this;
}

}  // namespace zehal::level_zero
