// One CUDA device (its primary context) as a hal::Device.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "hal/cuda/cuda_memory.hpp"
#include "hal/cuda/cuda_counters.hpp"
#include "hal/cuda/cuda_trace.hpp"
#include "hal/cuda/cuda_virtual_memory.hpp"
#include "hal/cuda/device_clock.hpp"
#include "hal/cuda/device_kernels.hpp"
#include "hal/cuda/driver_api.hpp"
#include "hal/cuda/export_memory.hpp"
#include "hal/cuda/foreign_memory.hpp"
#include "hal/cuda/printf_flush.hpp"
#include "hal/device.hpp"
#include "hal/host_memory.hpp"
#include "hal/pointer_registry.hpp"

namespace zehal::cuda {

// Memory and commands need the primary context, which costs tens of milliseconds to
// create, so it is retained on first use (with the timer kernels, the clock and the trace
// source), not when the backend is probed. Every method is thread-safe.
class CudaDevice final : public hal::Device {
public:
    // Device `ordinal` (handle `device`) with the backend's host memory `host`.
    CudaDevice(const DriverApi& api, std::shared_ptr<HostMemory> host, int ordinal, CUdevice device);
    ~CudaDevice() override;

    // Reads the properties; false with *why when the device cannot serve zehal.
    bool describe(std::string* why);

    const hal::DeviceProperties& properties() const override { return props_; }
    std::string_view backend_name() const override { return "cuda"; }
    // True once a CUDA call returned an error that leaves the context unusable.
    bool lost() const noexcept override { return lost_.load(std::memory_order_acquire); }
    const std::vector<hal::MetricGroupInfo>& metric_groups() const override;
    hal::TraceSource* trace_source() override;
    // The GpuActivity counters (CUPTI's PM sampling), where libcupti and the chip offer them.
    hal::CounterSource* counter_source() override;
    hal::VirtualMemory* virtual_memory() override { return virtual_memory_supported_ ? &virtual_memory_ : nullptr; }
    // cuFlushGPUDirectRDMAWrites of the device's context, where the driver and the device
    // offer it (CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS); else UNSUPPORTED_FEATURE.
    ze_result_t flush_inbound_writes() override;
    // cuDeviceCanAccessPeer between two CUDA devices (a device accesses itself).
    bool can_access_peer(const hal::Device& other) const override;
    bool owns_event(const hal::Event& event) const noexcept override;
    // Its own events and every other CUDA device's: an event's flag is portable pinned memory
    // at one address in every context (unified addressing), which a stream waits on.
    bool waits_for_event(const hal::Event& event) const noexcept override;
    // Every CUDA device's events: the stream writes the portable flag as it does its own,
    // and the timestamps with this device's timer (mapped to the event's device when queried).
    bool signals_event(const hal::Event& event) const noexcept override;

    // --- for the backend's queues and events ---
    const DriverApi& api() const noexcept { return api_; }
    // Retains the primary context and sets up kernels, clock and trace source, once;
    // the result of that set-up (DEVICE_LOST once lost).
    ze_result_t ready();
    // Valid after ready() succeeded.
    CUcontext context() const noexcept { return ctx_; }
    // The CUDA device.
    CUdevice handle() const noexcept { return device_; }
    const DeviceKernels& kernels() const noexcept { return kernels_; }
    DeviceClock& clock() noexcept { return clock_; }
    // The marks of launches that print, flushed when a host wait sees work complete.
    PrintfFlush& printf_flush() noexcept { return printf_flush_; }
    // The output of completed launches that print written to standard output (a host wait
    // or query saw work of this device complete).
    void flush_printf() noexcept { printf_flush_.flush(api_, ctx_); }
    // The trace source when the export group may need probes, else null.
    CudaTrace* trace() noexcept { return trace_.get(); }
    // The ze_result_t of `r`, marking the device lost on a sticky error.
    ze_result_t check(CUresult r) noexcept;
    // A cache that places operands of this device's copies (hal::find_operand: memory of
    // this device, host memory of any backend, memory the driver knows (ForeignCudaMemory),
    // or system memory), for one queue; the device must outlive it.
    hal::OperandCache operand_cache() const noexcept;
    // Holds the allocation (of this device, or host memory of any backend) holding
    // [p, p + size) for a command (hal::find_operand with a hold): its free waits until
    // hal::PointerRegistry::release(*held). The errors of find_operand.
    ze_result_t hold_memory(const void* p, size_t size, hal::PointerRegistry::InFlight** held) const;
    // For [p, p + size) in a reservation of the device's virtual memory: the answer of
    // hal::VirtualMemory::find_operand for `use`, *out placed as device memory. nullopt for
    // any other memory (the operand cache places it).
    std::optional<ze_result_t> find_virtual(const void* p, size_t size, hal::OperandUse use, hal::Operand* out) const;
    // Before a command of this device touches memory of `peer` (another CUDA device): peer
    // access enabled from this context once, where the devices can; without it the driver
    // stages the copies through host memory. The error of a failed set-up of either context.
    ze_result_t use_peer(CudaDevice& peer);

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
    ze_result_t do_record_on_stream(uintptr_t stream, const hal::EventRef& event, hal::StreamMark mark) override;
    ze_result_t do_global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) override;
    ze_result_t do_export_dma_buf(uint32_t group, int* fd, size_t* size) override;
    ze_result_t do_import_dma_buf(int fd, size_t size, void** out) override;
    // Access as can_access_peer; atomics from cuDeviceGetP2PAttribute; bandwidth unknown (0).
    ze_result_t do_peer_properties(const hal::Device& other, hal::PeerProperties* out) const override;

    ze_result_t set_up();

    const DriverApi& api_;
    const std::shared_ptr<HostMemory> host_;
    const int ordinal_;
    const CUdevice device_;
    hal::DeviceProperties props_;
    std::string cupti_why_;  // why there is no tracer
    // The tracer's groups (describe), then GpuActivity where its counters can be sampled
    // (added at the first metric_groups(), under counters_checked_).
    mutable std::vector<hal::MetricGroupInfo> groups_;
    mutable std::once_flag counters_checked_;
    mutable std::string counters_chip_;  // the chip whose counters GpuActivity samples; empty: none

    std::once_flag ready_once_;
    ze_result_t ready_result_ = ZE_RESULT_ERROR_UNINITIALIZED;
    CUcontext ctx_ = nullptr;
    DeviceKernels kernels_;
    DeviceClock clock_;
    std::unique_ptr<CudaTrace> trace_;
    std::once_flag counters_made_;
    std::unique_ptr<CudaCounters> counters_;  // made at the first counter_source() where GpuActivity is listed
    std::unique_ptr<ExportMemory> export_;
    PrintfFlush printf_flush_;

    std::atomic<bool> lost_{false};
    // The driver's virtual memory management is there (describe).
    bool virtual_memory_supported_ = false;
    std::mutex peers_mu_;  // one set-up of peer access at a time
    // Element i: the set-up for the device of ordinal i is done (peer access enabled, or none
    // possible); one element per CUDA device of the process, written under peers_mu_ and
    // read without it by each command.
    std::vector<std::atomic<bool>> peers_enabled_;
    hal::PointerRegistry memory_;                      // device, shared and imported allocations
    hal::DeviceMemoryListing listing_{memory_, this};  // memory_ listed while the device lives
    ForeignCudaMemory foreign_{api_, ordinal_};        // other libraries' CUDA memory
    // Reservations and mappings; released in the destructor while the context is retained.
    CudaVirtualMemory virtual_memory_{api_, *this, ordinal_};
};

}  // namespace zehal::cuda
