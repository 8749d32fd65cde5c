// The software device: memory over host pages, engines as worker threads, a device clock
// with its own frequency and valid bits, kernel timestamps, a trace source and memfd export
// (of metric export memory and of allocations).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "hal/device.hpp"
#include "hal/host_event.hpp"
#include "hal/host_memory.hpp"
#include "hal/pointer_registry.hpp"
#include "hal/sim/sim_clock.hpp"
#include "hal/sim/sim_command_gate.hpp"
#include "hal/sim/sim_config.hpp"
#include "hal/sim/sim_engine.hpp"
#include "hal/sim/sim_memory.hpp"
#include "hal/sim/sim_trace.hpp"
#include "hal/sim/sim_trace_source.hpp"
#include "hal/sim/sim_virtual_memory.hpp"

namespace zehal::sim {

// Every Device method is thread-safe (see hal/device.hpp); docs/sim.md has the choices.
class SimDevice final : public hal::Device {
public:
    // Memory kinds allocate_exportable gives (bit 1 << kind): host, device and shared.
    static constexpr uint32_t kExportableKinds = 0x7;
    // Bytes of each export group's memfd.
    static constexpr size_t kExportBytes = 64u << 10;

    // A device with a valid `config` (see create_device), sharing `host` memory.
    SimDevice(const SimConfig& config, std::shared_ptr<SimHostMemory> host);
    // Stops the engines (running what can run), then releases the device's memory and fds.
    ~SimDevice() override;

    const hal::DeviceProperties& properties() const override { return props_; }
    std::string_view backend_name() const override { return "sim"; }
    bool lost() const noexcept override { return domain_->lost(); }
    const std::vector<hal::MetricGroupInfo>& metric_groups() const override { return SimTrace::groups(); }
    hal::TraceSource* trace_source() override { return trace_source_.get(); }
    hal::CounterSource* counter_source() override { return trace_->counters(); }
    // Any dma-buf, and any memfd sealed against shrinking (hal/import_fd.hpp).
    bool imports_any_dma_buf() const override { return true; }
    // Every kind: memory allocated for export lies in a memfd of its own.
    uint32_t exportable_kinds() const override { return kExportableKinds; }
    hal::VirtualMemory* virtual_memory() override { return virtual_memory_.get(); }
    // Nothing to flush: the device's memory is the process's, and a command queued after
    // this call reaches the engine through its queue's lock, which orders every write that
    // came before it (whoever made it) before the command runs.
    ze_result_t flush_inbound_writes() override { return lost() ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS; }
    // Every sim device of the process accesses every other's memory (docs/devices.md).
    bool can_access_peer(const hal::Device& other) const override;
    bool owns_event(const hal::Event& event) const noexcept override;
    // Events of every sim device: an engine waiting for another device's event polls it.
    bool waits_for_event(const hal::Event& event) const noexcept override;
    // Events of every sim device, timestamp events included: their kernel timestamps are
    // written in the event's device's ticks (docs/devices.md).
    bool signals_event(const hal::Event& event) const noexcept override;

    // --- for the device's queues ---
    hal::EventDomain& domain() noexcept { return *domain_; }
    // The allocation of this device, of a peer sim device, or host memory of any backend,
    // holding [p, p + size), or the range itself when it is system memory (hal::find_operand):
    // SUCCESS, INVALID_ARGUMENT (a device of another backend's memory, pages not mapped),
    // INVALID_SIZE (runs past its end), DEVICE_LOST (a lost peer's memory). On SUCCESS with
    // `held`, a zehal allocation is held for the command (*held, for
    // hal::PointerRegistry::release once it is over): its free waits. System memory is not
    // held (*held null). With `peer`, the owner of a peer's memory (else null) goes there.
    // A range of a reservation of the device's virtual memory must be mapped with an access
    // that allows `use` (else INVALID_ARGUMENT).
    ze_result_t find_memory(const void* p, size_t size, hal::Allocation* out,
                            hal::PointerRegistry::InFlight** held = nullptr, hal::DeviceRef* peer = nullptr,
                            hal::OperandUse use = hal::OperandUse::read) const;
    // --- for the device's modules ---
    // Makes [base, base + size), a program-scope variable of a module of this device, device
    // memory of the device (an operand of its copies, fills and kernels, which free() refuses)
    // until remove_module_global(base). OUT_OF_HOST_MEMORY when it cannot be recorded.
    ze_result_t add_module_global(void* base, size_t size);
    // Ends add_module_global(base), once no command holds the memory any more.
    void remove_module_global(void* base);
    // --- for the device's virtual memory ---
    // Takes `size` bytes of the device's memory; false when they are not left.
    bool reserve(size_t size) noexcept;
    // Gives back what reserve took.
    void unreserve(size_t size) noexcept;
    // Counts one more allocation; false when fault injection fails it (fail_allocation_after).
    bool count_allocation() noexcept;
    // Export group of memory imported from one of this device's export memfds (from an
    // Allocation's tag), or kNoExport.
    static uint32_t export_group_of(const hal::Allocation& a) noexcept {
        return a.tag ? static_cast<uint32_t>(a.tag - 1) : kNoExport;
    }

protected:
    // The loss drops every queued command and free waits for the running ones: memory goes
    // back on a lost device too (nothing leaks).
    bool frees_when_lost() const noexcept override { return true; }

private:
    // hal::Device's hooks (hal/device.hpp): the arguments are checked.
    ze_result_t do_allocate(hal::MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal,
                            void** out) override;
    ze_result_t do_free(void* ptr) override;
    ze_result_t do_pointer_info(const void* ptr, hal::PointerInfo* out) const override;
    ze_result_t do_check_operand(const void* ptr, size_t size) const override;
    ze_result_t do_create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<hal::Queue>* out) override;
    ze_result_t do_create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<hal::EventPool>* out) override;
    ze_result_t do_create_module(hal::ModuleFormat format, std::span<const uint8_t> binary,
                                 std::string_view build_flags, std::shared_ptr<hal::Module>* out,
                                 std::string* log) override;
    ze_result_t do_global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) override;
    ze_result_t do_export_dma_buf(uint32_t group, int* fd, size_t* size) override;
    ze_result_t do_import_dma_buf(int fd, size_t size, void** out) override;
    ze_result_t do_import_host_dma_buf(int fd, size_t size, void** out) override;
    ze_result_t do_allocate_exportable(hal::MemoryKind kind, size_t size, size_t alignment, uint32_t flags,
                                       uint32_t ordinal, void** out) override;
    ze_result_t do_export_allocation(const void* base, int* fd) override;
    ze_result_t do_peer_properties(const hal::Device& other, hal::PeerProperties* out) const override;
    ze_result_t do_lose() override;

    // One export group's memfd, made on first export.
    struct ExportMemory {
        int fd = -1;
        size_t size = 0;
        dev_t dev = 0;
        ino_t ino = 0;
    };

    // A kernel faulted on an engine: the device is lost (lose(), or while the destructor
    // stops the engines, its events only).
    void lose_after_fault();
    void release(const hal::Allocation& a) noexcept;
    // import_dma_buf (device memory) and import_host_dma_buf (host memory).
    ze_result_t import_file(hal::MemoryKind kind, int fd, size_t size, void** out);
    // allocate and allocate_exportable (the sim device has no use for their flags and one
    // memory ordinal): memory over fresh pages, or over a memfd's.
    ze_result_t allocate_memory(hal::MemoryKind kind, size_t size, size_t alignment, bool exportable, void** out);

    const SimConfig config_;
    hal::DeviceProperties props_;
    const SimClock clock_;
    const std::shared_ptr<SimHostMemory> host_;
    std::shared_ptr<hal::EventDomain> domain_;
    CommandGate gate_;  // commands running on the engines (before the engines: they use it)
    std::unique_ptr<SimTrace> trace_;
    std::unique_ptr<SimTraceSource> trace_source_;  // trace_ as handed out

    hal::PointerRegistry memory_;                      // device, shared and imported allocations
    hal::DeviceMemoryListing listing_{memory_, this};  // memory_ listed while the device lives
    // Bytes of device and shared memory in use. Relaxed CAS: a counter no other data hangs on.
    std::atomic<uint64_t> used_bytes_{0};
    // Allocations asked for, for fail_allocation_after (relaxed: a counter).
    std::atomic<uint64_t> allocations_{0};
    std::atomic<uint64_t> next_queue_id_{0};
    std::atomic<bool> closing_{false};  // set when the destructor starts stopping the engines

    std::vector<std::unique_ptr<Engine>> engines_[2];   // [ordinal][index]
    std::unique_ptr<SimVirtualMemory> virtual_memory_;  // released once the engines are stopped

    std::mutex export_mu_;
    std::vector<ExportMemory> exports_;  // per metric group

    std::mutex module_globals_mu_;
    std::set<const void*> module_globals_;  // bases of memory_'s entries that modules own
};

}  // namespace zehal::sim
