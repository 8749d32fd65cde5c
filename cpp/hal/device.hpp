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
//
// The methods that take arguments check them here, once, for every backend (contract §1:
// lost device, null outputs, zero and oversized sizes, alignment, enumerations the HAL knows,
// events of another device), then call a private do_ hook: a backend implements the hooks,
// trusting what they are handed (RMM's device_memory_resource::allocate → do_allocate).
class Device : public std::enable_shared_from_this<Device> {
public:
    // Alignment of an allocation asked with alignment 0.
    static constexpr size_t kDefaultAlignment = 64;
    // Largest alignment allocate accepts (UNSUPPORTED_ALIGNMENT above).
    static constexpr size_t kMaxAlignment = size_t{1} << 30;
    // Allocation flags every backend accepts (Level Zero's cached and uncached bias bits of
    // device and host allocations); other bits are INVALID_ENUMERATION.
    static constexpr uint32_t kValidAllocationFlags = 0xF;

    virtual ~Device() = default;

    // Static description.
    virtual const DeviceProperties& properties() const = 0;
    // Name of the backend this device belongs to ("sim", "cuda", "level_zero").
    virtual std::string_view backend_name() const = 0;
    // True once the device is lost (lose(), a fault, or an error of the backend's driver
    // that leaves the device unusable).
    virtual bool lost() const noexcept = 0;

    // Allocates `size` bytes of `kind` memory aligned to `alignment` (0: kDefaultAlignment;
    // else a power of two up to kMaxAlignment, or UNSUPPORTED_ALIGNMENT). `flags` are
    // allocation flags (kValidAllocationFlags; 0 always valid; an unknown kind or flag bit is
    // INVALID_ENUMERATION); `ordinal` a memory ordinal (< memory_ordinals, else
    // INVALID_ARGUMENT). Size 0 → INVALID_SIZE; device or shared memory larger than
    // max_allocation_bytes → UNSUPPORTED_SIZE; beyond what is left → OUT_OF_DEVICE_MEMORY
    // (device, shared) or OUT_OF_HOST_MEMORY (host). Host memory is allocated and freed
    // through any device of the backend, and usable by every device of every backend
    // (hal/host_memory.hpp).
    ze_result_t allocate(MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal, void** out);
    // Frees what allocate, allocate_exportable, import_dma_buf or import_host_dma_buf
    // returned; INVALID_NULL_POINTER for null, INVALID_ARGUMENT for any other pointer
    // (foreign, interior, already freed). On a lost device, DEVICE_LOST; the memory is given
    // back all the same where the loss dropped the device's commands (frees_when_lost).
    ze_result_t free(void* ptr);
    // Describes the allocation holding `ptr` (interior pointers too); INVALID_NULL_POINTER
    // for a null `ptr` or `out`; INVALID_ARGUMENT when no allocation of this device or of its
    // backend's host memory holds it.
    ze_result_t pointer_info(const void* ptr, PointerInfo* out) const;

    // What this device's queues answer for a command operand [ptr, ptr + size) (the rule
    // of hal/queue.hpp): SUCCESS, INVALID_SIZE past the end of its allocation,
    // INVALID_ARGUMENT for memory no queue of the device may touch. Checks a command
    // before any queue runs it (a recorded command list).
    ze_result_t check_operand(const void* ptr, size_t size) const;
    // A queue on engine `index` of engine group `ordinal` (kComputeOrdinal: compute_engines
    // engines; kCopyOrdinal: copy_engines); INVALID_ARGUMENT outside them.
    ze_result_t create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<Queue>* out);
    // A pool of `count` events (0 → INVALID_SIZE; more than the backend's pools hold →
    // UNSUPPORTED_SIZE) with EventPoolFlag bits (unknown bits → INVALID_ENUMERATION; a
    // timestamp flag on a device without kernel timestamps, a mapped timestamp flag on one
    // without synchronized timestamps → UNSUPPORTED_FEATURE).
    ze_result_t create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<EventPool>* out);
    // A module from `binary` in `format` with `build_flags` (zeModuleCreate's options).
    // MODULE_BUILD_FAILURE with the reason in `log` (may be null) when it does not build;
    // UNSUPPORTED_FEATURE (reason in `log`) for a format the device cannot load, or SPIR-V
    // when zehal was built without the compiler. INVALID_SIZE for an empty binary,
    // INVALID_ENUMERATION for a format the HAL does not know.
    ze_result_t create_module(ModuleFormat format, std::span<const uint8_t> binary, std::string_view build_flags,
                              std::shared_ptr<Module>* out, std::string* log);
    // Records `event`'s start (StreamMark::start) or its end and signal (StreamMark::end) on
    // `stream`, a native stream of this device that zehal did not create (CUDA: a CUstream
    // of the device's primary context, as an integer), in that stream's order: the event's
    // kernel and synchronized timestamps then bracket the work the stream runs between the
    // two marks (0 is CUDA's legacy default stream, which PyTorch and CuPy use by default).
    // INVALID_NULL_HANDLE for a null event; INVALID_ARGUMENT for an event of another device;
    // INVALID_ENUMERATION for another mark; UNSUPPORTED_FEATURE for an event without kernel
    // timestamps, and on backends without native streams (sim, level_zero).
    ze_result_t record_on_stream(uintptr_t stream, const EventRef& event, StreamMark mark);
    // Host ns (CLOCK_MONOTONIC_RAW) and device ticks sampled together; INVALID_NULL_POINTER
    // when either output is null.
    ze_result_t global_timestamps(uint64_t* host_ns, uint64_t* device_ticks);

    // Metric groups of the device (empty when it has none).
    virtual const std::vector<MetricGroupInfo>& metric_groups() const = 0;
    // The hardware trace stream; null when the device has no tracer.
    virtual TraceSource* trace_source() = 0;
    // The counters of the event- and time-based groups; null when the device samples none
    // (its groups then advertise neither sampling type).
    virtual CounterSource* counter_source() { return nullptr; }
    // dma-buf of export-capable group `group` (index in metric_groups()): the fd is the
    // group's, valid while the device lives. INVALID_ARGUMENT for other groups;
    // UNSUPPORTED_FEATURE on a device without dma-buf export (properties().dma_buf_export).
    ze_result_t export_dma_buf(uint32_t group, int* fd, size_t* size);
    // A device allocation over the pages of `fd` (not taken over: the caller keeps it);
    // freed with free(). INVALID_ARGUMENT for a negative fd (and for an fd the backend
    // cannot map), INVALID_SIZE for size 0 (and for more than the fd holds);
    // UNSUPPORTED_FEATURE where the backend cannot import.
    ze_result_t import_dma_buf(int fd, size_t size, void** out);

    // True when import_dma_buf maps any dma-buf a program hands it (another driver's, another
    // process's export), not only this backend's own metric export memory.
    virtual bool imports_any_dma_buf() const { return false; }
    // Host memory over the pages of `fd`, as import_dma_buf maps them (the caller keeps the
    // fd, the same argument checks), usable like any host memory of the backend; freed with
    // free(). UNSUPPORTED_FEATURE where the backend cannot import into host memory.
    ze_result_t import_host_dma_buf(int fd, size_t size, void** out);
    // Bit (1u << MemoryKind) for each kind allocate_exportable gives; 0 where the backend
    // exports no allocation.
    virtual uint32_t exportable_kinds() const { return 0; }
    // Allocates as allocate() does (its checks), memory that export_allocation hands out as
    // an fd that import_dma_buf maps, in this process or another (a dma-buf; a memfd on sim).
    // UNSUPPORTED_FEATURE for a kind outside exportable_kinds().
    ze_result_t allocate_exportable(MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal,
                                    void** out);
    // The fd of the allocation starting at `base`, made by allocate_exportable: the
    // allocation's own (the caller must not close it; dup to keep it), the same on every
    // call, closed when the allocation is freed. UNSUPPORTED_FEATURE where the backend
    // exports nothing; INVALID_NULL_POINTER for a null `base` or `fd`; INVALID_ARGUMENT for
    // other memory (not allocated for export, interior, foreign, freed).
    ze_result_t export_allocation(const void* base, int* fd);

    // True when this device's engines and kernels read and write `other`'s device memory
    // directly (Level Zero's zeDeviceCanAccessPeer). A device accesses itself. Copies between
    // two devices of one backend run either way (contract §2.2, docs/devices.md).
    virtual bool can_access_peer(const Device& other) const { return &other == this; }
    // True when this device's engines copy to and from `other`'s device memory, directly or
    // staged: such memory is an operand of its queues (hal::find_operand). Devices of one
    // backend, unless the backend says otherwise.
    virtual bool copies_peer_memory(const Device& other) const { return other.backend_name() == backend_name(); }
    // How this device reaches `other`'s memory. DEVICE_LOST when either device is lost;
    // INVALID_NULL_POINTER for a null `out`.
    ze_result_t peer_properties(const Device& other, PeerProperties* out) const;
    // The device's virtual memory (reservations, physical memory, mappings); null where the
    // backend has none (callers answer UNSUPPORTED_FEATURE). Lives as long as the device.
    virtual VirtualMemory* virtual_memory() { return nullptr; }

    // The device is lost from now on where the backend injects faults (sim);
    // UNSUPPORTED_FEATURE elsewhere.
    ze_result_t lose();
    // True when `event` is an event of this device (of one of its pools): a tracer's
    // notification and a stream's timestamps take only these.
    virtual bool owns_event(const Event& event) const noexcept = 0;
    // True when commands of this device may wait for `event`: its own events, and where the
    // backend can, another device's (every sim device's).
    virtual bool waits_for_event(const Event& event) const noexcept { return owns_event(event); }
    // True when commands of this device may signal `event`, and so reset it, query its kernel
    // timestamps and take back the command that signals it: its own events, and where the
    // backend can, another device's (CUDA: every CUDA device's, its flag written by any of
    // them and its timestamps by the writer's timer, read in the event's device's ticks; sim:
    // every sim device's, timestamps written in the event's device's ticks). A Level Zero event pool made for every device of a context is signalled by each
    // device's lists.
    virtual bool signals_event(const Event& event) const noexcept { return owns_event(event); }
    // Makes writes that reached the device's memory from outside the device (the host, a
    // peer, a NIC's RDMA) visible to its later commands (Level Zero's zeContextSystemBarrier).
    // UNSUPPORTED_FEATURE where the backend has no such flush.
    virtual ze_result_t flush_inbound_writes() { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }

protected:
    // True when free gives memory back on a lost device: the loss dropped every command
    // that could still use it. Elsewhere free on a lost device changes nothing.
    virtual bool frees_when_lost() const noexcept { return false; }

private:
    // What a backend implements. A hook runs only after its method's checks passed: the
    // device not lost (except do_free under frees_when_lost), outputs not null, sizes and
    // alignment within the rules (alignment 0 already made kDefaultAlignment), kinds, flags
    // and formats known, queue engines within the properties' counts, events of this device.

    virtual ze_result_t do_allocate(MemoryKind kind, size_t size, size_t alignment, uint32_t flags, uint32_t ordinal,
                                    void** out) = 0;
    // SUCCESS when `ptr` started an allocation and is freed now; INVALID_ARGUMENT otherwise.
    virtual ze_result_t do_free(void* ptr) = 0;
    virtual ze_result_t do_pointer_info(const void* ptr, PointerInfo* out) const = 0;
    virtual ze_result_t do_check_operand(const void* ptr, size_t size) const = 0;
    virtual ze_result_t do_create_queue(uint32_t ordinal, uint32_t index, std::shared_ptr<Queue>* out) = 0;
    virtual ze_result_t do_create_event_pool(uint32_t count, uint32_t flags, std::shared_ptr<EventPool>* out) = 0;
    // `log` is never null.
    virtual ze_result_t do_create_module(ModuleFormat format, std::span<const uint8_t> binary,
                                         std::string_view build_flags, std::shared_ptr<Module>* out,
                                         std::string* log) = 0;
    // `event` is one of this device's, with kernel timestamps. This default is a backend
    // without native streams.
    virtual ze_result_t do_record_on_stream(uintptr_t stream, const EventRef& event, StreamMark mark);
    virtual ze_result_t do_global_timestamps(uint64_t* host_ns, uint64_t* device_ticks) = 0;
    // `group` is an export-capable group of metric_groups().
    virtual ze_result_t do_export_dma_buf(uint32_t group, int* fd, size_t* size) = 0;
    virtual ze_result_t do_import_dma_buf(int fd, size_t size, void** out) = 0;
    // This default is a backend that cannot import into host memory.
    virtual ze_result_t do_import_host_dma_buf(int fd, size_t size, void** out);
    // `kind` is one of exportable_kinds() (these defaults are a backend that exports none).
    virtual ze_result_t do_allocate_exportable(MemoryKind kind, size_t size, size_t alignment, uint32_t flags,
                                               uint32_t ordinal, void** out);
    virtual ze_result_t do_export_allocation(const void* base, int* fd);
    // Neither device lost. This default: access as can_access_peer, nothing else known.
    virtual ze_result_t do_peer_properties(const Device& other, PeerProperties* out) const;
    // This default is a backend without fault injection (UNSUPPORTED_FEATURE).
    virtual ze_result_t do_lose();
};

using DeviceRef = std::shared_ptr<Device>;

}  // namespace zehal::hal
