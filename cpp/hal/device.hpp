// A device: memory, queues, events, clocks and the hardware side of metrics.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/counter_source.hpp"
#include "hal/event.hpp"
#include "hal/metric_info.hpp"
#include "hal/module.hpp"
#include "hal/queue.hpp"
#include "hal/trace_source.hpp"
#include "hal/types.hpp"
#include "hal/virtual_memory.hpp"

namespace zehal::hal {

// What Device::record_on_stream writes on a foreign stream.
enum class StreamMark : uint32_t {
    start = 0,  // the event's start timestamp
    end = 1,    // its end timestamp, then its signal
};

// Every method is thread-safe. After the device is lost, every call returns DEVICE_LOST
// (properties and names still answer).
class Device : public std::enable_shared_from_this<Device> {
public:
    virtual ~Device() = default;

    // Static description.
    virtual const DeviceProperties& properties() const = 0;
    // Name of the backend this device belongs to ("sim", "cuda", "level_zero").
    virtual std::string_view backend_name() const = 0;

    // Allocates `size` bytes of `kind` memory aligned to `alignment` (0: the backend's
    // default; else a power of two, or UNSUPPORTED_ALIGNMENT). `flags` are the
    // backend's allocation flags (cached bias and the like; 0 always valid); `ordinal` a
    // memory ordinal (< memory_ordinals, else INVALID_ARGUMENT). Size 0 → INVALID_SIZE;
    // larger than max_allocation_bytes → UNSUPPORTED_SIZE; beyond what is left →
    // OUT_OF_DEVICE_MEMORY (device, shared) or OUT_OF_HOST_MEMORY (host).
    // Host memory is allocated and freed through any device of the backend, and usable by
    // every device of every backend (hal/host_memory.hpp).
    virtual ze_result_t allocate(MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal,
                                 void** out) = 0;
    // Frees what allocate, allocate_exportable, import_dma_buf or import_host_dma_buf
    // returned; INVALID_NULL_POINTER for null, INVALID_ARGUMENT for any other pointer
    // (foreign, interior, already freed).
    virtual ze_result_t free(void* ptr) = 0;
    // Describes the allocation holding `ptr` (interior pointers too); INVALID_ARGUMENT
    // when no allocation of this device or of its backend's host memory holds it.
    virtual ze_result_t pointer_info(const void* ptr, PointerInfo* out) const = 0;

    // What this device's queues answer for a command operand [ptr, ptr + size) (the rule
    // of hal/queue.hpp): SUCCESS, INVALID_SIZE past the end of its allocation,
    // INVALID_ARGUMENT for memory no queue of the device may touch. Checks a command
    // before any queue runs it (a recorded command list).
    virtual ze_result_t check_operand(const void* ptr, size_t size) const = 0;
    // A queue on engine `index` of engine group `ordinal`; INVALID_ARGUMENT outside them.
    virtual ze_result_t create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<Queue>* out) = 0;
    // A pool of `count` events (0 → INVALID_SIZE) with EventPoolFlag bits (unknown bits →
    // INVALID_ENUMERATION; a timestamp flag on a device without kernel timestamps →
    // UNSUPPORTED_FEATURE).
    virtual ze_result_t create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<EventPool>* out) = 0;
    // A module from `binary` in `format` with `build_flags` (zeModuleCreate's options).
    // MODULE_BUILD_FAILURE with the reason in `log` when it does not build;
    // UNSUPPORTED_FEATURE (reason in `log`) for a format the device cannot load, or SPIR-V
    // when zehal was built without the compiler. INVALID_SIZE for an empty binary.
    virtual ze_result_t create_module(ModuleFormat format, std::span<const uint8_t> binary,
                                      std::string_view build_flags, std::shared_ptr<Module>* out, std::string* log) = 0;
    // Records `event`'s start (StreamMark::start) or its end and signal (StreamMark::end) on
    // `stream`, a native stream of this device that zehal did not create (CUDA: a CUstream
    // of the device's primary context, as an integer), in that stream's order: the event's
    // kernel and synchronized timestamps then bracket the work the stream runs between the
    // two marks (0 is CUDA's legacy default stream, which PyTorch and CuPy use by default).
    // INVALID_NULL_HANDLE for a null event; INVALID_ARGUMENT for an
    // event of another device; UNSUPPORTED_FEATURE for an event without kernel timestamps,
    // and on backends without native streams (sim, level_zero).
    virtual ze_result_t record_on_stream(uintptr_t stream, const EventRef& event, StreamMark mark) = 0;
    // Host ns (CLOCK_MONOTONIC_RAW) and device ticks sampled together.
    virtual ze_result_t global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) = 0;

    // Metric groups of the device (empty when it has none).
    virtual const std::vector<MetricGroupInfo>& metric_groups() const = 0;
    // The hardware trace stream; null when the device has no tracer.
    virtual TraceSource* trace_source() = 0;
    // The counters of the event- and time-based groups; null when the device samples none
    // (its groups then advertise neither sampling type).
    virtual CounterSource* counter_source() { return nullptr; }
    // dma-buf of export-capable group `group` (index in metric_groups()): the fd is the
    // group's, valid while the device lives. INVALID_ARGUMENT for other groups.
    virtual ze_result_t export_dma_buf(uint32_t group, int* fd, size_t* size) = 0;
    // A device allocation over the pages of `fd` (not taken over: the caller keeps it);
    // freed with free(). UNSUPPORTED_FEATURE where the backend cannot import.
    virtual ze_result_t import_dma_buf(int fd, size_t size, void** out) = 0;

    // True when import_dma_buf maps any dma-buf a program hands it (another driver's, another
    // process's export), not only this backend's own metric export memory.
    virtual bool imports_any_dma_buf() const { return false; }
    // Host memory over the pages of `fd`, as import_dma_buf maps them (the caller keeps the
    // fd), usable like any host memory of the backend; freed with free().
    // UNSUPPORTED_FEATURE where the backend cannot import into host memory.
    virtual ze_result_t import_host_dma_buf(int /*fd*/, size_t /*size*/, void** /*out*/) {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    // Bit (1u << MemoryKind) for each kind allocate_exportable gives; 0 where the backend
    // exports no allocation.
    virtual uint32_t exportable_kinds() const { return 0; }
    // Allocates as allocate() does, memory that export_allocation hands out as an fd that
    // import_dma_buf maps, in this process or another (a dma-buf; a memfd on sim).
    // UNSUPPORTED_FEATURE for a kind outside exportable_kinds().
    virtual ze_result_t allocate_exportable(MemoryKind /*kind*/, size_t /*size*/, size_t /*alignment*/,
                                            uint32_t /*flags*/, uint32_t /*ordinal*/, void** /*out*/) {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    // The fd of the allocation starting at `base`, made by allocate_exportable: the
    // allocation's own (the caller must not close it; dup to keep it), the same on every
    // call, closed when the allocation is freed. INVALID_ARGUMENT for other memory (not
    // allocated for export, interior, foreign, freed); UNSUPPORTED_FEATURE where the
    // backend exports nothing.
    virtual ze_result_t export_allocation(const void* /*base*/, int* /*fd*/) {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }

    // True when this device's engines and kernels read and write `other`'s device memory
    // directly (Level Zero's zeDeviceCanAccessPeer). A device accesses itself. Copies between
    // two devices of one backend run either way (contract §2.2, docs/devices.md).
    virtual bool can_access_peer(const Device& other) const { return &other == this; }
    // True when this device's engines copy to and from `other`'s device memory, directly or
    // staged: such memory is an operand of its queues (hal::find_operand). Devices of one
    // backend, unless the backend says otherwise.
    virtual bool copies_peer_memory(const Device& other) const { return other.backend_name() == backend_name(); }
    // How this device reaches `other`'s memory. DEVICE_LOST when either device is lost.
    virtual ze_result_t peer_properties(const Device& other, PeerProperties* out) const {
        if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *out = PeerProperties{};
        out->access = can_access_peer(other);
        return ZE_RESULT_SUCCESS;
    }
    // The device's virtual memory (reservations, physical memory, mappings); null where the
    // backend has none (callers answer UNSUPPORTED_FEATURE). Lives as long as the device.
    virtual VirtualMemory* virtual_memory() { return nullptr; }

    // Sim only: the device is lost from now on (UNSUPPORTED_FEATURE elsewhere).
    virtual ze_result_t lose() = 0;
    // True when `event` is an event of this device (of one of its pools): the only events
    // its commands, and what stands on them (a tracer's notification), may signal.
    virtual bool owns_event(const Event& event) const noexcept = 0;
    // True when commands of this device may wait for `event`: its own events, and where the
    // backend can, another device's (every sim device's). Signals, resets and timestamp
    // queries stay with the event's own device (owns_event).
    virtual bool waits_for_event(const Event& event) const noexcept { return owns_event(event); }
    // Makes writes that reached the device's memory from outside the device (the host, a
    // peer, a NIC's RDMA) visible to its later commands (Level Zero's zeContextSystemBarrier).
    // UNSUPPORTED_FEATURE where the backend has no such flush.
    virtual ze_result_t flush_inbound_writes() { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
};

using DeviceRef = std::shared_ptr<Device>;

}  // namespace zehal::hal
