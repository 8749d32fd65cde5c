// Plain data of the device model: memory kinds, flags, properties, timestamp results.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace zehal::hal {

// Where an allocation lives (Level Zero's host, device and shared USM).
enum class MemoryKind : uint32_t { host = 0, device = 1, shared = 2 };

// Device timestamp capabilities (event query kernel timestamps extension).
enum TimestampCapability : uint32_t {
    kTimestampKernel = 1u << 0,        // kernel timestamps in device ticks
    kTimestampSynchronized = 1u << 1,  // timestamps mapped to host ns
};

// Event pool flags (Level Zero's ze_event_pool_flags_t values).
enum EventPoolFlag : uint32_t {
    kPoolHostVisible = 1u << 0,
    kPoolIpc = 1u << 1,
    kPoolKernelTimestamp = 1u << 2,
    kPoolKernelMappedTimestamp = 1u << 3,
};
inline constexpr uint32_t kPoolValidFlags = 0xF;

// Engine group ordinals of create_queue: 0 compute, 1 copy.
inline constexpr uint32_t kComputeOrdinal = 0;
inline constexpr uint32_t kCopyOrdinal = 1;

// A device's place on the PCI bus (its BDF address).
struct PciAddress {
    uint32_t domain = 0;
    uint32_t bus = 0;
    uint32_t device = 0;
    uint32_t function = 0;
};

// What a device is and can do.
struct DeviceProperties {
    std::string name;
    std::array<uint8_t, 16> uuid{};
    uint64_t memory_bytes = 0;                 // device memory capacity
    uint64_t max_allocation_bytes = 0;         // largest single allocation
    uint64_t timer_hz = 0;                     // device clock frequency
    uint32_t kernel_timestamp_valid_bits = 0;  // bits of kernel timestamps
    uint32_t timestamp_valid_bits = 0;         // bits of global timestamps and trace ticks
    uint32_t compute_engines = 1;              // engines of ordinal 0
    uint32_t copy_engines = 0;                 // engines of ordinal 1
    uint32_t subdevices = 0;                   // 0: no sub-devices
    uint32_t memory_ordinals = 1;              // memory ordinals accepted by allocate
    uint32_t memory_bus_width_bits = 0;        // width of the device memory's bus
    uint32_t memory_clock_mhz = 0;             // peak clock of the device memory (0: not known)
    bool on_pci = false;                       // a PCI device, at pci_address
    PciAddress pci_address;                    // its address when on_pci
    uint32_t timestamp_flags = 0;              // TimestampCapability bits
    bool dma_buf_export = false;               // metric export memory supported
    bool tracer = false;                       // a TraceSource exists
    bool indirect_launches = false;            // Queue::append_launch_indirect runs (else UNSUPPORTED_FEATURE)
    bool ipc_event_pools = false;              // kPoolIpc pools are shared with other processes (EventPool::ipc_file)
    // Kernels take system memory (malloc, the stack, memory of another backend) as pointer
    // arguments and read and write it in place (Level Zero's shared system allocations).
    bool kernels_use_system_memory = false;
    std::string limits;  // what the device lacks and why ("" when nothing)
    // Kernels (contract §12): the module formats create_module takes, and the compute limits
    // launches are held to (zeros on a device that runs no kernels).
    uint32_t module_formats = 0;                // bit (1 << ModuleFormat) per format accepted
    uint32_t max_group_size = 0;                // work-items of one group, in total
    std::array<uint32_t, 3> max_group_dims{};   // work-items of one group, per dimension
    std::array<uint32_t, 3> max_group_count{};  // groups of one launch, per dimension
    uint32_t max_local_bytes = 0;               // __local memory of one group
    // Floating-point atomics kernels may use, per element type, as bits of Level Zero's
    // ze_device_fp_atomic_ext_flags_t (0: none).
    uint32_t fp16_atomics = 0;
    uint32_t fp32_atomics = 0;
    uint32_t fp64_atomics = 0;
};

// How one device reaches another's memory (Level Zero's ze_device_p2p_properties_t and the
// bandwidth of ze_device_p2p_bandwidth_exp_properties_t). Copies between two devices of one
// backend run whether or not `access` holds (staged through host memory where it does not).
struct PeerProperties {
    bool access = false;                 // the device's engines and kernels touch the peer's memory directly
    bool atomics = false;                // atomics on the peer's memory are coherent
    uint64_t bandwidth_bytes_per_s = 0;  // the link's bandwidth; 0 when unknown or unthrottled
};

// One packet of a kernel timestamp query; the layout of ze_kernel_timestamp_result_t
// (global start/end, then context start/end), also the NumPy dtype's fields.
struct KernelTimestampResult {
    uint64_t global_start;
    uint64_t global_end;
    uint64_t context_start;
    uint64_t context_end;
};

// What the pointer registry knows of a pointer.
struct PointerInfo {
    MemoryKind kind = MemoryKind::host;
    void* base = nullptr;   // start of the allocation holding the pointer
    size_t size = 0;        // bytes of that allocation
    size_t alignment = 0;   // alignment it was made with
    bool imported = false;  // made by import_dma_buf
};

}  // namespace zehal::hal
