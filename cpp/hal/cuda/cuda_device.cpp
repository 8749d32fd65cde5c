#include "hal/cuda/cuda_device.hpp"

#include "hal/cuda/cuda_event.hpp"
#include "hal/cuda/cuda_module.hpp"
#include "hal/cuda/cuda_queue.hpp"

#ifdef ZEHAL_HAVE_CUPTI_H
#include "hal/cuda/cupti_api.hpp"
#endif

namespace zehal::cuda {

namespace {

// Nominal rate of %globaltimer: nanoseconds.
constexpr uint64_t kGlobalTimerHz = 1'000'000'000;
// The alignment an imported dma-buf is documented with (Level Zero's import alignment).
constexpr size_t kImportAlignment = 4096;

// The number of CUDA devices of the process (0 when the driver cannot say).
size_t device_count(const DriverApi& api) {
    int count = 0;
    return api.cuDeviceGetCount(&count) == CUDA_SUCCESS && count > 0 ? static_cast<size_t>(count) : 0;
}

}  // namespace

CudaDevice::CudaDevice(const DriverApi& api, std::shared_ptr<HostMemory> host, int ordinal, CUdevice device)
    : api_(api),
      host_(std::move(host)),
      ordinal_(ordinal),
      device_(device),
      peers_enabled_(device_count(api)) {}

CudaDevice::~CudaDevice() {
    if (!ctx_) return;
    {
        ContextScope scope(api_, ctx_);
        printf_flush_.release(api_);
        counters_.reset();
        trace_.reset();
        for (const hal::Allocation& a : memory_.take_all()) {
            if (a.info.imported)
                export_->release(a.mapping, a.mapping_bytes);
            else
                release_memory(api_, a);
        }
        export_.reset();
        virtual_memory_.shutdown();
        clock_.shutdown();
        kernels_.unload(api_);
    }
    api_.cuDevicePrimaryCtxRelease(device_);
}

bool CudaDevice::describe(std::string* why) {
    char name[256] = {};
    CUuuid uuid{};
    size_t total = 0;
    int engines = 0, dma_buf = 0, unified = 0, map_host = 0, vmm = 0, managed = 0, bus_bits = 0, memory_khz = 0;
    auto attr = [&](int* v, CUdevice_attribute a) { return api_.cuDeviceGetAttribute(v, a, device_); };
    CUresult r = api_.cuDeviceGetName(name, sizeof(name) - 1, device_);
    if (r == CUDA_SUCCESS) r = api_.cuDeviceGetUuid(&uuid, device_);
    if (r == CUDA_SUCCESS) r = api_.cuDeviceTotalMem(&total, device_);
    if (r == CUDA_SUCCESS) r = attr(&engines, CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT);
    if (r == CUDA_SUCCESS) r = attr(&unified, CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
    if (r == CUDA_SUCCESS) r = attr(&map_host, CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY);
    if (r == CUDA_SUCCESS) r = attr(&managed, CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
    if (r != CUDA_SUCCESS) {
        *why = "CUDA device " + std::to_string(ordinal_) + ": " + error_name(api_, r);
        return false;
    }
    if (!unified || !map_host || !managed) {
        *why = "CUDA device " + std::to_string(ordinal_) + " (" + name +
               ") lacks unified addressing, mapped host memory or managed memory";
        return false;
    }
    // Optional features: absent attributes read as unsupported.
    if (attr(&dma_buf, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED) != CUDA_SUCCESS) dma_buf = 0;
    if (attr(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED) != CUDA_SUCCESS) vmm = 0;
    if (attr(&bus_bits, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) != CUDA_SUCCESS) bus_bits = 0;
    if (attr(&memory_khz, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) != CUDA_SUCCESS) memory_khz = 0;
    // Heterogeneous memory management: the GPU walks the host's page tables.
    int pageable_access = 0;
    if (attr(&pageable_access, CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS) != CUDA_SUCCESS) pageable_access = 0;
    int pci_domain = -1, pci_bus = -1, pci_device = -1;
    if (attr(&pci_domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID) != CUDA_SUCCESS) pci_domain = -1;
    if (attr(&pci_bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID) != CUDA_SUCCESS) pci_bus = -1;
    if (attr(&pci_device, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID) != CUDA_SUCCESS) pci_device = -1;

    props_.name = name;
    static_assert(sizeof(uuid.bytes) == 16, "CUuuid is 16 bytes");
    for (size_t i = 0; i < 16; ++i) props_.uuid[i] = static_cast<uint8_t>(uuid.bytes[i]);
    props_.memory_bytes = total;
    props_.max_allocation_bytes = total;
    props_.timer_hz = kGlobalTimerHz;
    props_.kernel_timestamp_valid_bits = 64;
    props_.timestamp_valid_bits = 64;
    props_.compute_engines = 1;
    props_.copy_engines = engines > 0 ? static_cast<uint32_t>(engines) : 1;
    props_.subdevices = 0;
    props_.memory_ordinals = 1;
    props_.memory_bus_width_bits = static_cast<uint32_t>(bus_bits > 0 ? bus_bits : 0);
    props_.memory_clock_mhz = static_cast<uint32_t>(memory_khz > 0 ? memory_khz / 1000 : 0);
    props_.on_pci = pci_domain >= 0 && pci_bus >= 0 && pci_device >= 0;
    if (props_.on_pci)  // CUDA names no function: a GPU is function 0 of its device
        props_.pci_address = {static_cast<uint32_t>(pci_domain), static_cast<uint32_t>(pci_bus),
                              static_cast<uint32_t>(pci_device), 0};
    props_.timestamp_flags = hal::kTimestampKernel | hal::kTimestampSynchronized;
    props_.dma_buf_export = dma_buf != 0 && vmm != 0;
    virtual_memory_supported_ = vmm != 0;
    props_.kernels_use_system_memory = pageable_access != 0;
#ifdef ZEHAL_HAVE_CUPTI_H
    props_.tracer = cupti_api(&cupti_why_) != nullptr;
#else
    cupti_why_ = "built without CUPTI headers (cupti_activity.h)";
    props_.tracer = false;
#endif
    if (!props_.tracer) props_.limits = "no tracer: " + cupti_why_;
#ifdef ZEHAL_HAVE_CUPTI_H
    if (props_.tracer) groups_ = CudaTrace::groups();
#endif
    describe_compute(api_, device_, &props_);
    return true;
}

ze_result_t CudaDevice::set_up() {
    CUresult r = api_.cuDevicePrimaryCtxRetain(&ctx_, device_);
    if (r != CUDA_SUCCESS) {
        ctx_ = nullptr;
        return check(r);
    }
    ContextScope scope(api_, ctx_);
    if ((r = kernels_.load(api_)) != CUDA_SUCCESS) return check(r);
    if ((r = clock_.init(api_, ctx_, &kernels_)) != CUDA_SUCCESS) return check(r);
    if (props_.tracer) {
        trace_ = CudaTrace::create(api_, ordinal_, &clock_, &cupti_why_);
        if (!trace_) return ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE;
    }
    export_ = std::make_unique<ExportMemory>(api_, device_, ordinal_);
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaDevice::ready() {
    std::call_once(ready_once_, [this] { ready_result_ = set_up(); });
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return ready_result_;
}

ze_result_t CudaDevice::check(CUresult r) noexcept {
    if (r == CUDA_SUCCESS) return ZE_RESULT_SUCCESS;
    // Release: a thread that sees the device lost sees why.
    if (is_device_lost(r)) lost_.store(true, std::memory_order_release);
    return to_ze_result(r);
}

hal::OperandCache CudaDevice::operand_cache() const noexcept {
    return hal::OperandCache(memory_, host_->registry, &foreign_);
}

std::optional<ze_result_t> CudaDevice::find_virtual(const void* p, size_t size, hal::OperandUse use,
                                                    hal::Operand* out) const {
    if (!virtual_memory_.holds(p)) return std::nullopt;
    hal::Operand found;
    const ze_result_t r = virtual_memory_.find_operand(p, size, use, &found.allocation);
    if (r == ZE_RESULT_SUCCESS && out) *out = found;
    return r;
}

ze_result_t CudaDevice::hold_memory(const void* p, size_t size, hal::PointerRegistry::InFlight** held) const {
    return hal::find_operand(memory_, host_->registry, p, size, nullptr, held);
}

// CUDA has no use for the allocation flags (cached and uncached bias hints) nor for memory
// ordinals beyond its one.
ze_result_t CudaDevice::do_allocate(hal::MemoryKind kind, size_t size, size_t alignment, uint32_t, uint32_t,
                                    void** out) {
    if (ze_result_t r = ready(); r != ZE_RESULT_SUCCESS) return r;

    ContextScope scope(api_, ctx_);
    if (kind == hal::MemoryKind::shared) {
        // Managed memory beyond what is free can hang the GPU: never ask for it.
        size_t free_bytes = 0, total_bytes = 0;
        if (CUresult r = api_.cuMemGetInfo(&free_bytes, &total_bytes); r != CUDA_SUCCESS) return check(r);
        if (size > free_bytes || alignment > free_bytes - size) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    hal::Allocation a;
    if (ze_result_t r = allocate_memory(api_, kind, size, alignment, &a); r != ZE_RESULT_SUCCESS) {
        if (r == ZE_RESULT_ERROR_DEVICE_LOST) lost_.store(true, std::memory_order_release);
        return r;
    }
    const bool host = kind == hal::MemoryKind::host;
    if (ze_result_t r = host ? host_->registry.insert(a) : memory_.insert(a); r != ZE_RESULT_SUCCESS) {
        release_memory(api_, a);
        return r;
    }
    *out = a.info.base;
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaDevice::do_free(void* ptr) {
    hal::Allocation a;
    if (memory_.remove(ptr, &a)) {
        ContextScope scope(api_, ctx_);
        if (a.info.imported)
            export_->release(a.mapping, a.mapping_bytes);
        else
            release_memory(api_, a);
        return ZE_RESULT_SUCCESS;
    }
    if (host_->registry.remove(ptr, &a)) {
        // Host memory may come from another device of the backend: free it under ours
        // (it is portable) when ours exists, else under the calling thread's context.
        if (ctx_) {
            ContextScope scope(api_, ctx_);
            release_memory(api_, a);
        } else {
            release_memory(api_, a);
        }
        return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t CudaDevice::do_check_operand(const void* ptr, size_t size) const {
    hal::Operand operand;
    if (auto r = find_virtual(ptr, size, hal::OperandUse::read, &operand)) return *r;
    return operand_cache().find(ptr, size, &operand);
}

ze_result_t CudaDevice::do_pointer_info(const void* ptr, hal::PointerInfo* out) const {
    hal::Allocation a;
    if (!memory_.find(ptr, &a) && !host_->registry.find(ptr, &a))
        return virtual_memory_.pointer_info(ptr, out) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = a.info;
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaDevice::do_create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<hal::Queue>* out) {
    return CudaQueue::create(std::static_pointer_cast<CudaDevice>(shared_from_this()), ordinal, index, out);
}

ze_result_t CudaDevice::do_create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<hal::EventPool>* out) {
    return CudaEventPool::create(std::static_pointer_cast<CudaDevice>(shared_from_this()), count, flags, out);
}

ze_result_t CudaDevice::do_global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) {
    if (ze_result_t r = ready(); r != ZE_RESULT_SUCCESS) return r;
    return clock_.now(host_ns, device_ticks);
}

const std::vector<hal::MetricGroupInfo>& CudaDevice::metric_groups() const {
#ifdef ZEHAL_HAVE_CUPTI_H
    // CUPTI's profiler starts only for a program that asks for the groups.
    std::call_once(counters_checked_, [this] {
        if (!props_.tracer) return;
        std::string why;
        counters_chip_ = CudaCounters::check(ordinal_, &why);
        if (counters_chip_.empty()) return;
        const hal::MetricGroupInfo& last = groups_.back();
        groups_.push_back(
            CudaCounters::group_info(2, last.first_metric_id + static_cast<uint32_t>(last.metrics.size())));
    });
#endif
    return groups_;
}

hal::CounterSource* CudaDevice::counter_source() {
    metric_groups();  // the check (counters_chip_)
    if (counters_chip_.empty() || ready() != ZE_RESULT_SUCCESS) return nullptr;
    std::call_once(counters_made_, [this] {
        counters_ = CudaCounters::create(api_, ordinal_, ctx_, &clock_, static_cast<uint32_t>(groups_.size() - 1),
                                         counters_chip_);
    });
    return counters_.get();
}

hal::TraceSource* CudaDevice::trace_source() {
    if (!props_.tracer || ready() != ZE_RESULT_SUCCESS) return nullptr;
    return trace_.get();
}

ze_result_t CudaDevice::do_export_dma_buf(uint32_t, int* fd, size_t* size) {
    if (ze_result_t r = ready(); r != ZE_RESULT_SUCCESS) return r;
    ContextScope scope(api_, ctx_);
    return export_->export_fd(fd, size);
}

ze_result_t CudaDevice::flush_inbound_writes() {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    int options = 0;
    if (!api_.cuFlushGPUDirectRDMAWrites ||
        api_.cuDeviceGetAttribute(&options, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS, device_) !=
            CUDA_SUCCESS ||
        !(options & CU_FLUSH_GPU_DIRECT_RDMA_WRITES_OPTION_HOST))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (ze_result_t r = ready(); r != ZE_RESULT_SUCCESS) return r;
    ContextScope scope(api_, ctx_);
    // To the owner: the writes become visible to this device's own later work.
    return check(api_.cuFlushGPUDirectRDMAWrites(CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TARGET_CURRENT_CTX,
                                                 CU_FLUSH_GPU_DIRECT_RDMA_WRITES_TO_OWNER));
}

bool CudaDevice::can_access_peer(const hal::Device& other) const {
    const auto* peer = dynamic_cast<const CudaDevice*>(&other);
    if (!peer) return false;
    if (peer == this) return true;
    int can = 0;
    return api_.cuDeviceCanAccessPeer(&can, device_, peer->device_) == CUDA_SUCCESS && can != 0;
}

ze_result_t CudaDevice::do_peer_properties(const hal::Device& other, hal::PeerProperties* out) const {
    const auto* peer = dynamic_cast<const CudaDevice*>(&other);
    *out = hal::PeerProperties{};
    out->access = can_access_peer(other);
    if (peer == this) {
        out->atomics = true;
    } else if (out->access) {
        int atomics = 0;
        out->atomics = api_.cuDeviceGetP2PAttribute(&atomics, CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED, device_,
                                                    peer->device_) == CUDA_SUCCESS &&
                       atomics != 0;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaDevice::use_peer(CudaDevice& peer) {
    if (&peer == this) return ZE_RESULT_SUCCESS;
    if (ze_result_t r = peer.ready(); r != ZE_RESULT_SUCCESS) return r;
    std::atomic<bool>* done = static_cast<size_t>(peer.ordinal_) < peers_enabled_.size()
                                  ? &peers_enabled_[peer.ordinal_]
                                  : nullptr;
    // Acquire: pairs with the release below, after the set-up.
    if (done && done->load(std::memory_order_acquire)) return ZE_RESULT_SUCCESS;
    std::lock_guard lock(peers_mu_);
    // Relaxed: peers_mu_ orders it after an earlier set-up's store.
    if (done && done->load(std::memory_order_relaxed)) return ZE_RESULT_SUCCESS;
    if (can_access_peer(peer)) {
        ContextScope scope(api_, ctx_);
        const CUresult r = api_.cuCtxEnablePeerAccess(peer.ctx_, 0);
        // Enabled by someone else (a CUDA runtime user) is enabled all the same.
        if (r != CUDA_SUCCESS && r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED) return check(r);
    }
    // Without peer access there is nothing to enable: the driver stages the copies.
    if (done) done->store(true, std::memory_order_release);  // release: see the first load
    return ZE_RESULT_SUCCESS;
}

bool CudaDevice::owns_event(const hal::Event& event) const noexcept {
    const auto* e = dynamic_cast<const CudaEvent*>(&event);
    return e && &e->device() == this;
}

bool CudaDevice::signals_event(const hal::Event& event) const noexcept {
    return dynamic_cast<const CudaEvent*>(&event) != nullptr;
}

bool CudaDevice::waits_for_event(const hal::Event& event) const noexcept {
    return dynamic_cast<const CudaEvent*>(&event) != nullptr;
}

ze_result_t CudaDevice::do_import_dma_buf(int fd, size_t size, void** out) {
    if (ze_result_t r = ready(); r != ZE_RESULT_SUCCESS) return r;
    ContextScope scope(api_, ctx_);
    void* p = nullptr;
    size_t mapped = 0;
    if (ze_result_t r = export_->import_fd(fd, size, &p, &mapped); r != ZE_RESULT_SUCCESS) return r;
    hal::Allocation a;
    a.info.kind = hal::MemoryKind::device;
    a.info.base = p;
    a.info.size = size;
    a.info.alignment = kImportAlignment;
    a.info.imported = true;
    a.mapping = p;
    a.mapping_bytes = mapped;
    if (ze_result_t r = memory_.insert(a); r != ZE_RESULT_SUCCESS) {
        export_->release(p, mapped);
        return r;
    }
    *out = p;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::cuda
