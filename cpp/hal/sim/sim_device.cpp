#include "hal/sim/sim_device.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <new>
#include <string>

#include "hal/import_fd.hpp"
#include "hal/sim/sim_module.hpp"
#include "hal/sim/sim_queue.hpp"
#include "hal/timestamps.hpp"

namespace zehal::sim {

namespace {

// Numbers sim devices in the order they are made (names and uuids).
std::atomic<uint32_t> g_device_number{0};

hal::DeviceProperties make_properties(const SimConfig& c, uint32_t number) {
    hal::DeviceProperties p;
    p.name = "zehal sim device " + std::to_string(number);
    static constexpr char kTag[8] = {'z', 'e', 'h', 'a', 'l', 's', 'i', 'm'};
    std::memcpy(p.uuid.data(), kTag, sizeof kTag);
    for (int i = 0; i < 4; ++i) p.uuid[12 + i] = static_cast<uint8_t>(number >> (8 * (3 - i)));
    p.memory_bytes = c.memory_bytes;
    p.max_allocation_bytes = c.memory_bytes;
    p.timer_hz = c.timer_hz;
    p.kernel_timestamp_valid_bits = c.kernel_timestamp_valid_bits;
    p.timestamp_valid_bits = c.timestamp_valid_bits;
    p.compute_engines = c.compute_engines;
    p.copy_engines = c.copy_engines;
    p.subdevices = c.subdevices;
    p.memory_ordinals = 1;
    // Sim memory is the host's: one 64-bit channel, at a clock the device cannot know.
    p.memory_bus_width_bits = 64;
    p.timestamp_flags = hal::kTimestampKernel | hal::kTimestampSynchronized;
    p.dma_buf_export = false;
    for (const hal::MetricGroupInfo& g : SimTrace::groups())
        if (g.type_flags & hal::kGroupExportDmaBuf) p.dma_buf_export = true;
    p.tracer = true;
    p.indirect_launches = true;  // the engine reads the counts when the command's turn comes
    p.ipc_event_pools = true;    // kPoolIpc pools live in a memfd, with the device clock (host_event.hpp)
    describe_kernels(&p);
    p.kernels_use_system_memory = p.module_formats != 0;  // kernels run on the host, in its address space
    return p;
}

}  // namespace

SimDevice::SimDevice(const SimConfig& config, std::shared_ptr<SimHostMemory> host)
    : config_(config),
      props_(make_properties(config, g_device_number.fetch_add(1, std::memory_order_relaxed))),
      clock_(config.timer_hz, config.start_ticks),
      host_(std::move(host)),
      exports_(SimTrace::groups().size()) {
    hal::EventDomain::Params params;
    params.timer_hz = config.timer_hz;
    params.kernel_timestamp_valid_bits = config.kernel_timestamp_valid_bits;
    params.timestamp_flags = props_.timestamp_flags;
    params.max_packets = std::max<uint32_t>(1, config.subdevices);
    params.linear_clock = clock_.linear();
    const SimClock clock = clock_;
    const uint64_t mask = hal::timestamp_max(config.kernel_timestamp_valid_bits);
    // Both read a copy of the clock: the domain outlives the device (its pools keep it).
    domain_ = std::make_shared<hal::EventDomain>(
        params,
        [clock, mask] {
            const uint64_t host = host_now_ns();
            return hal::TimestampReference{host, clock.ticks_at(host) & mask};
        },
        [clock](uint64_t host_ns) { return clock.ticks_at(host_ns); });
    trace_ = SimTrace::create(config_, clock_);
    trace_source_ = std::make_unique<SimTraceSource>(*trace_);
    const EngineContext ctx{
        &config_, &clock_, domain_.get(), trace_.get(), trace_source_.get(), &gate_, [this] { lose_after_fault(); }};
    for (uint32_t i = 0; i < config.compute_engines; ++i)
        engines_[hal::kComputeOrdinal].push_back(std::make_unique<Engine>(ctx, hal::kComputeOrdinal, i));
    for (uint32_t i = 0; i < config.copy_engines; ++i)
        engines_[hal::kCopyOrdinal].push_back(std::make_unique<Engine>(ctx, hal::kCopyOrdinal, i));
    virtual_memory_ = std::make_unique<SimVirtualMemory>(*this);
    // Engines waiting for events sleep; a signal of one of this device's events wakes them.
    domain_->set_listener([this] {
        for (const auto& group : engines_)
            for (const auto& e : group) e->wake();
    });
}

SimDevice::~SimDevice() {
    // No more wake-ups through the listener (the pools may outlive the device), then stop
    // the engines before their memory goes.
    domain_->set_listener(nullptr);
    // Release: a kernel that faults while the engines stop (lose_after_fault) sees it.
    closing_.store(true, std::memory_order_release);
    for (auto& group : engines_) group.clear();
    virtual_memory_.reset();
    hal::remove_lost_host_memory_user(&gate_);
    // Peers' commands may still hold this memory (an operand of theirs): they run first.
    for (const hal::Allocation& a : memory_.take_all_unused()) unmap_memory(a);
    for (const ExportMemory& e : exports_)
        if (e.fd >= 0) close(e.fd);
}

bool SimDevice::reserve(size_t size) noexcept {
    uint64_t used = used_bytes_.load(std::memory_order_relaxed);
    do {
        if (size > config_.memory_bytes - used) return false;
    } while (!used_bytes_.compare_exchange_weak(used, used + size, std::memory_order_relaxed));
    return true;
}

void SimDevice::unreserve(size_t size) noexcept { used_bytes_.fetch_sub(size, std::memory_order_relaxed); }

bool SimDevice::count_allocation() noexcept {
    const uint64_t nth = allocations_.fetch_add(1, std::memory_order_relaxed);
    return !config_.fail_allocation_after || nth < *config_.fail_allocation_after;
}

void SimDevice::release(const hal::Allocation& a) noexcept {
    unmap_memory(a);
    if (a.info.kind != hal::MemoryKind::host && !a.info.imported) unreserve(a.info.size);
}

ze_result_t SimDevice::do_allocate(hal::MemoryKind kind, size_t size, size_t alignment, uint32_t, uint32_t,
                                   void** out) {
    return allocate_memory(kind, size, alignment, false, out);
}

ze_result_t SimDevice::do_allocate_exportable(hal::MemoryKind kind, size_t size, size_t alignment, uint32_t, uint32_t,
                                              void** out) {
    return allocate_memory(kind, size, alignment, true, out);
}

ze_result_t SimDevice::allocate_memory(hal::MemoryKind kind, size_t size, size_t alignment, bool exportable,
                                       void** out) {
    const bool on_device = kind != hal::MemoryKind::host;
    const ze_result_t out_of_memory = on_device ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
                                                : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (!count_allocation()) return out_of_memory;
    if (on_device && !reserve(size)) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;

    hal::Allocation a;
    a.info.kind = kind;
    a.info.size = size;
    a.info.alignment = alignment;
    if (!(exportable ? map_exportable_memory(size, alignment, &a) : map_memory(size, alignment, &a))) {
        if (on_device) unreserve(size);
        return out_of_memory;
    }
    if (ze_result_t r = on_device ? memory_.insert(a) : host_->registry.insert(a); r != ZE_RESULT_SUCCESS) {
        release(a);
        return r;
    }
    *out = a.info.base;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::do_free(void* ptr) {
    {
        // A module's program-scope variable is the module's: it goes with the module.
        std::lock_guard lock(module_globals_mu_);
        if (module_globals_.count(ptr)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    hal::Allocation a;
    // Each remove waits until no queued or running command holds the memory (docs/lifetimes.md).
    const bool device_memory = memory_.remove(ptr, &a);
    const bool found = device_memory || host_->registry.remove(ptr, &a);
    // Memory is given back even once the device is lost, so nothing leaks; but only once no
    // engine that may touch it still runs a command (contract §11): this device's engines
    // for its memory; for host memory, every lost device's of every backend (the registry's
    // remove waited for them).
    if (found && device_memory && lost()) gate_.wait_idle();
    if (found) release(a);
    return found ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t SimDevice::do_pointer_info(const void* ptr, hal::PointerInfo* out) const {
    hal::Allocation a;
    if (!memory_.find(ptr, &a) && !host_->registry.find(ptr, &a))
        return virtual_memory_->pointer_info(ptr, out) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = a.info;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::do_check_operand(const void* ptr, size_t size) const {
    hal::Allocation allocation;
    return find_memory(ptr, size, &allocation);
}

ze_result_t SimDevice::find_memory(const void* p, size_t size, hal::Allocation* out,
                                   hal::PointerRegistry::InFlight** held, hal::DeviceRef* peer,
                                   hal::OperandUse use) const {
    if (virtual_memory_->holds(p)) return virtual_memory_->find_operand(p, size, use, out, held);
    // Sim memory is host memory underneath: host memory of any backend, system memory and a
    // peer's memory are copied alike.
    hal::Operand operand;
    const ze_result_t r = hal::find_operand(memory_, host_->registry, p, size, &operand, held);
    if (r != ZE_RESULT_SUCCESS) return r;
    *out = operand.allocation;
    if (peer) *peer = std::move(operand.peer);
    return r;
}

bool SimDevice::can_access_peer(const hal::Device& other) const { return other.backend_name() == "sim"; }

ze_result_t SimDevice::do_peer_properties(const hal::Device& other, hal::PeerProperties* out) const {
    const auto* peer = dynamic_cast<const SimDevice*>(&other);
    *out = hal::PeerProperties{};
    out->access = peer != nullptr;
    // One process's memory: atomics on it are the CPU's, coherent.
    out->atomics = out->access;
    // Own memory moves at the engines' speed; a peer's through the link.
    if (peer && peer != this) out->bandwidth_bytes_per_s = config_.link_bandwidth_bytes_per_s;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::do_create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<hal::Queue>* out) {
    Engine* engine = engines_[ordinal][index].get();
    try {
        auto state = std::make_shared<QueueState>(next_queue_id_.fetch_add(1, std::memory_order_relaxed), ordinal,
                                                  index);
        if (!engine->bind(state)) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        auto self = std::static_pointer_cast<SimDevice>(shared_from_this());
        *out = std::make_shared<SimQueue>(std::move(self), engine, std::move(state));
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::do_create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<hal::EventPool>* out) {
    return domain_->create_pool(count, flags, out);
}

ze_result_t SimDevice::do_global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) {
    // One host reading, and the ticks of that same instant; the host time as the
    // (test-only skewed) node clock reads it.
    const uint64_t host = host_now_ns();
    *device_ticks = clock_.ticks_at(host) & hal::timestamp_max(config_.timestamp_valid_bits);
    *host_ns = static_cast<uint64_t>(config_.host_skew.apply(host));
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::do_export_dma_buf(uint32_t group, int* fd, size_t* size) {
    const auto& groups = metric_groups();
    std::lock_guard lock(export_mu_);
    ExportMemory& e = exports_[group];
    if (e.fd < 0) {
        const std::string name = "zehal-sim-export-" + groups[group].name;
        const int made = memfd_create(name.c_str(), MFD_CLOEXEC | MFD_ALLOW_SEALING);
        if (made < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        struct stat st {};
        // Sealed against shrinking: an importer's mapping can never lose its pages (§11).
        if (ftruncate(made, static_cast<off_t>(kExportBytes)) != 0 || !hal::seal_against_shrinking(made) ||
            fstat(made, &st) != 0) {
            close(made);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        e = ExportMemory{made, kExportBytes, st.st_dev, st.st_ino};
    }
    *fd = e.fd;
    *size = e.size;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::do_import_dma_buf(int fd, size_t size, void** out) {
    return import_file(hal::MemoryKind::device, fd, size, out);
}

ze_result_t SimDevice::do_import_host_dma_buf(int fd, size_t size, void** out) {
    return import_file(hal::MemoryKind::host, fd, size, out);
}

ze_result_t SimDevice::import_file(hal::MemoryKind kind, int fd, size_t size, void** out) {
    uint64_t bytes = 0;
    if (ze_result_t r = hal::check_import_fd(fd, &bytes); r != ZE_RESULT_SUCCESS) return r;
    if (size > bytes) return ZE_RESULT_ERROR_INVALID_SIZE;
    struct stat st {};
    if (fstat(fd, &st) != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;

    hal::Allocation a;
    a.info.kind = kind;
    a.info.size = size;
    a.info.alignment = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    a.info.imported = true;
    {
        std::lock_guard lock(export_mu_);
        for (size_t g = 0; g < exports_.size(); ++g)
            if (exports_[g].fd >= 0 && exports_[g].dev == st.st_dev && exports_[g].ino == st.st_ino) a.tag = g + 1;
    }
    if (!map_file(fd, size, &a)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const ze_result_t r = kind == hal::MemoryKind::host ? host_->registry.insert(a) : memory_.insert(a);
    if (r != ZE_RESULT_SUCCESS) {
        unmap_memory(a);
        return r;
    }
    *out = a.info.base;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::do_export_allocation(const void* base, int* fd) {
    hal::Allocation a;
    if (!memory_.find(base, &a) && !host_->registry.find(base, &a)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (a.info.base != base || a.export_fd < 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *fd = a.export_fd;
    return ZE_RESULT_SUCCESS;
}

bool SimDevice::owns_event(const hal::Event& event) const noexcept {
    const auto* e = dynamic_cast<const hal::HostEvent*>(&event);
    return e && &e->domain() == domain_.get();
}

void SimDevice::lose_after_fault() {
    // Acquire: pairs with the destructor's release. While the engines stop, the list of
    // engines is being destroyed: only the events learn of the loss then.
    if (closing_.load(std::memory_order_acquire))
        static_cast<void>(domain_->lose());
    else
        static_cast<void>(lose());
}

bool SimDevice::waits_for_event(const hal::Event& event) const noexcept {
    return dynamic_cast<const hal::HostEvent*>(&event) != nullptr;
}

bool SimDevice::signals_event(const hal::Event& event) const noexcept {
    // Another device's timestamp event needs that device's clock (every sim device's has one).
    const auto* e = dynamic_cast<const hal::HostEvent*>(&event);
    return e && (&e->domain() == domain_.get() || !e->records_timestamps() || e->domain().has_clock());
}

ze_result_t SimDevice::do_lose() {
    // Marks the domain (every event call answers DEVICE_LOST, event waiters wake), then
    // wakes the engines (they drop what is queued) and queue synchronizers.
    if (!domain_->lose()) return ZE_RESULT_ERROR_DEVICE_LOST;
    hal::add_lost_host_memory_user(&gate_);
    for (const auto& group : engines_)
        for (const auto& e : group) e->on_lost();
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::sim
