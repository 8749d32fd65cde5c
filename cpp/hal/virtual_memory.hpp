// Virtual memory of a device: address ranges reserved without memory behind them, physical
// memory objects (device or host pages), and mappings of reservation ranges onto physical
// memory with an access (Level Zero's zeVirtualMem* and zePhysicalMem*, CUDA's cuMemMap
// family). A mapped range is an operand of copies and fills like device memory.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "zehal/ze_result.h"
#include "hal/host_memory.hpp"
#include "hal/pointer_registry.hpp"
#include "hal/types.hpp"

namespace zehal::hal {

// Access of a virtual range (Level Zero's ze_memory_access_attribute_t values).
enum class MemoryAccess : uint32_t { none = 0, read_write = 1, read_only = 2 };

// What a command does with an operand: the access its range needs.
enum class OperandUse : uint32_t { read = 0, write = 1 };

class VirtualMemory;

// Pages of memory that ranges of reservations map (device memory, or host memory). Lives
// while any range maps it (each mapping keeps a reference). Thread-safe.
class PhysicalMemory {
public:
    virtual ~PhysicalMemory() = default;
    PhysicalMemory(const PhysicalMemory&) = delete;
    PhysicalMemory& operator=(const PhysicalMemory&) = delete;

    // device or host.
    MemoryKind kind() const noexcept { return kind_; }
    // Bytes, a whole number of pages.
    size_t size() const noexcept { return size_; }
    // Ranges that map it now.
    uint32_t mappings() const noexcept { return mappings_.load(std::memory_order_relaxed); }
    // An fd of a file holding its pages from offset 0 (sim: its memfd, sealed against
    // shrinking), which another process may map (an IPC handle); owned by this object, valid
    // while it lives. -1 where the backend has none.
    virtual int file() const noexcept { return -1; }

protected:
    PhysicalMemory(MemoryKind kind, size_t size) noexcept : kind_(kind), size_(size) {}

private:
    friend class VirtualMemory;
    const MemoryKind kind_;
    const size_t size_;
    const VirtualMemory* owner_ = nullptr;  // the virtual memory that made it (set once, at creation)
    // Relaxed: written under the owner's control lock; read for a snapshot (mappings()).
    std::atomic<uint32_t> mappings_{0};
};

// The virtual memory of one device. Public methods check every rule and call the backend's
// private do_* hooks with arguments already checked, under one control lock (reserve, free,
// map, unmap and access changes are serialised; look-ups by queues only share a lock).
// Addresses and sizes are whole pages of page_size(0) (UNSUPPORTED_ALIGNMENT for an address,
// UNSUPPORTED_SIZE for a size that is not; 0 → UNSUPPORTED_SIZE). A range that lies in no
// reservation → INVALID_ARGUMENT. Unmapping, narrowing the access of, or freeing a range waits
// until no queued or running command of the device uses its reservation (as zeMemFree waits
// for commands on memory it frees, docs/lifetimes.md). Every method is thread-safe.
class VirtualMemory {
public:
    virtual ~VirtualMemory() = default;
    VirtualMemory(const VirtualMemory&) = delete;
    VirtualMemory& operator=(const VirtualMemory&) = delete;

    // The page size for allocations of `size` bytes (0: the smallest page size): starts and
    // sizes aligned to it suit reservations, physical memory and mappings of that size.
    ze_result_t page_size(size_t size, size_t* out) const;
    // Reserves `size` bytes of address space, at `hint` when that range is free and the hint
    // is aligned to the page size of `size` (null: any), else elsewhere (the backend's
    // do_reserve takes the hint only so); *out is the start. Accessible nowhere until mapped.
    ze_result_t reserve(const void* hint, size_t size, void** out);
    // Frees the reservation [ptr, ptr + size) (exactly as reserved), unmapping what is mapped
    // in it (its physical memory stays). INVALID_ARGUMENT for anything else (freed twice).
    ze_result_t free(const void* ptr, size_t size);
    // New physical memory of `kind` (device or host, else INVALID_ENUMERATION) and `size`
    // bytes; device memory counts against the device's memory (OUT_OF_DEVICE_MEMORY).
    ze_result_t create_physical(MemoryKind kind, size_t size, std::shared_ptr<PhysicalMemory>* out);
    // Device physical memory over the first `size` bytes of `fd` (whole pages), an fd
    // import_dma_buf takes (hal/import_fd.hpp: else INVALID_ARGUMENT; smaller than `size` →
    // INVALID_SIZE); the caller keeps its fd. Not counted against the device's memory.
    // UNSUPPORTED_FEATURE where the backend cannot import.
    ze_result_t import_physical(int fd, size_t size, std::shared_ptr<PhysicalMemory>* out);
    // Gives up the caller's reference to physical memory: HANDLE_OBJECT_IN_USE (nothing
    // changes) while a range maps it, else *physical is reset.
    ze_result_t destroy_physical(std::shared_ptr<PhysicalMemory>* physical);
    // Maps [ptr, ptr + size), which lies in one reservation and overlaps no mapping, onto
    // the pages of `physical` from `offset` (page aligned; offset + size within it, else
    // INVALID_SIZE) with `access` (INVALID_ENUMERATION past read_only). Physical memory of
    // another device's virtual memory → INVALID_ARGUMENT; a range already mapped →
    // INVALID_ARGUMENT.
    ze_result_t map(const void* ptr, size_t size, const std::shared_ptr<PhysicalMemory>& physical, size_t offset,
                    MemoryAccess access);
    // Unmaps the mappings in [ptr, ptr + size), a range of one reservation; pages not mapped
    // stay so (unmapping twice succeeds, as Level Zero drivers do). A mapping only partly in
    // the range (each is the range of one map call) → INVALID_ARGUMENT, nothing unmapped.
    ze_result_t unmap(const void* ptr, size_t size);
    // Sets the access of [ptr, ptr + size): whole adjacent mappings that tile it, else
    // INVALID_ARGUMENT (a page not mapped, a mapping only partly in the range).
    ze_result_t set_access(const void* ptr, size_t size, MemoryAccess access);
    // The access of the page at `ptr` (none where nothing is mapped) and *out_size, the bytes
    // from `ptr` on that share it, up to the end of the reservation.
    ze_result_t get_access(const void* ptr, size_t size, MemoryAccess* access, size_t* out_size) const;

    // --- for the device ---
    // True when `p` lies in one of the reservations.
    bool holds(const void* p) const;
    // The operand [p, p + size) of a command that `use`s it: SUCCESS when every byte lies in
    // one reservation and is mapped with an access that allows the use (read: read-only or
    // read-write; write: read-write), *out describing the reservation (kind device);
    // INVALID_ARGUMENT for memory unmapped or not accessible so, INVALID_SIZE past the end of
    // the reservation. With `held`, the reservation is held for the command on SUCCESS
    // (PointerRegistry::release(*held) when it is over): unmap, free and access changes wait.
    ze_result_t find_operand(const void* p, size_t size, OperandUse use, Allocation* out,
                             PointerRegistry::InFlight** held = nullptr) const;
    // Describes the reservation holding `p` (kind device, its base and size).
    bool pointer_info(const void* p, PointerInfo* out) const;
    // The physical memory mapped at `p` and the offset of `p` into it; INVALID_ARGUMENT where
    // no reservation holds `p` or nothing is mapped there.
    ze_result_t physical_at(const void* p, std::shared_ptr<PhysicalMemory>* physical, size_t* offset) const;
    // Reservations now (for tests).
    size_t reservations() const;

protected:
    VirtualMemory() = default;
    // Unmaps and frees every reservation (a backend's destructor calls it, its hooks still
    // alive, once no command runs).
    void release_all() noexcept;

private:
    struct Mapping {
        size_t size = 0;
        std::shared_ptr<PhysicalMemory> physical;
        size_t offset = 0;  // into physical
        MemoryAccess access = MemoryAccess::none;
    };
    struct Reservation {
        uintptr_t base = 0;
        size_t size = 0;
        std::map<uintptr_t, Mapping> mappings;  // by start address; never overlapping
    };
    using Reservations = std::map<uintptr_t, Reservation>;

    // Checks shared by the range calls: pointer, page alignment, size.
    ze_result_t check_range(const void* ptr, size_t size) const;
    // Caller holds state_mu_. The reservation wholly holding [addr, addr + size), or null.
    Reservation* reservation_of(uintptr_t addr, size_t size);
    const Reservation* reservation_of(uintptr_t addr, size_t size) const;
    // Caller holds state_mu_. True when a mapping of `r` starts before `addr` and ends after it.
    static bool splits(const Reservation& r, uintptr_t addr);
    // Caller holds state_mu_. True when mappings of `r` tile [addr, addr + size) exactly: the
    // first starts at addr, each next where the one before ends, the last ends at addr + size.
    static bool tiles(const Reservation& r, uintptr_t addr, size_t size);
    // Caller holds state_mu_. True when every byte of [addr, addr + size) of `r` is mapped and
    // `allowed` says yes to each mapping's access.
    template <typename Allowed>
    static bool covered(const Reservation& r, uintptr_t addr, size_t size, Allowed allowed);
    // Caller holds control_mu_ and not state_mu_: returns once no command holds the
    // reservation starting at `base`.
    void wait_unheld(uintptr_t base) const;

    // Backend hooks; arguments are checked, calls serialised by control_mu_.
    // The smallest page size (a power of two) and the one for allocations of `size` bytes.
    virtual size_t do_page_size(size_t size) const noexcept = 0;
    // Address space of `size` bytes aligned to `alignment`, at `hint` when free (may be null).
    virtual ze_result_t do_reserve(const void* hint, size_t size, size_t alignment, void** out) = 0;
    virtual void do_free(void* base, size_t size) noexcept = 0;
    virtual ze_result_t do_create_physical(MemoryKind kind, size_t size, std::shared_ptr<PhysicalMemory>* out) = 0;
    // Physical memory over the pages of `fd`, checked importable and at least `size` bytes.
    virtual ze_result_t do_import_physical(int /*fd*/, size_t /*size*/, std::shared_ptr<PhysicalMemory>* /*out*/) {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    virtual ze_result_t do_map(void* ptr, size_t size, PhysicalMemory& physical, size_t offset,
                               MemoryAccess access) = 0;
    // Back to inaccessible reserved space.
    virtual ze_result_t do_unmap(void* ptr, size_t size) noexcept = 0;
    virtual ze_result_t do_protect(void* ptr, size_t size, PhysicalMemory& physical, MemoryAccess access) = 0;
    // True once the device is lost (every call then answers DEVICE_LOST).
    virtual bool do_lost() const noexcept = 0;

    mutable std::mutex control_mu_;       // serialises changes; taken before state_mu_
    mutable std::shared_mutex state_mu_;  // guards reservations_ (look-ups share it)
    Reservations reservations_;
    PointerRegistry registry_;                // one allocation per reservation: commands hold it
    DeviceMemoryListing listing_{registry_};  // other devices refuse the reservations
};

}  // namespace zehal::hal
