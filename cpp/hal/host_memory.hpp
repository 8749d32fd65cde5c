// Host memory is host memory (contract §2.2): a backend's host allocations, which every
// device of every backend may copy to and from, and how a device places a copy's operand
// (memory of the device, host memory of any backend, or system memory: what no zehal
// allocation holds).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/pointer_registry.hpp"

namespace zehal::hal {

class Device;

// Something that may still touch host memory after its device is lost (a lost sim device's
// engines finishing the command they run): host memory of every backend is given back only
// once each such user is idle (contract §11).
class LostHostMemoryUser {
public:
    // Returns once the user touches no memory and never will again.
    virtual void wait_idle() const noexcept = 0;

protected:
    ~LostHostMemoryUser() = default;
};

// Registers `user` from the moment its device is lost; unregister it before it goes.
void add_lost_host_memory_user(const LostHostMemoryUser* user);
void remove_lost_host_memory_user(const LostHostMemoryUser* user) noexcept;

// The host memory of one backend: the allocations it made, which only it frees. Each one
// is also entered in a process-wide index of host memory, where a device of any backend
// finds it (find_operand). Thread-safe.
class HostMemoryRegistry {
public:
    // `backend` names the owner ("sim", "cuda", "level_zero"; messages and tests).
    explicit HostMemoryRegistry(std::string_view backend);
    // Takes out of the index whatever is still registered (the caller has released it or
    // is about to, as with take_all).
    ~HostMemoryRegistry();
    HostMemoryRegistry(const HostMemoryRegistry&) = delete;
    HostMemoryRegistry& operator=(const HostMemoryRegistry&) = delete;

    // As PointerRegistry::insert (INVALID_ARGUMENT for an empty or overlapping allocation,
    // OUT_OF_HOST_MEMORY when a table cannot grow); `a.info.kind` must be host.
    ze_result_t insert(const Allocation& a) noexcept;
    // As PointerRegistry::remove: only what this backend allocated. Once removed (no new
    // copy finds it), waits until no command of any device holds it and every lost user is
    // idle: the caller may then release it.
    bool remove(const void* base, Allocation* out);
    // As PointerRegistry::find and find_range, over this backend's allocations only.
    bool find(const void* p, Allocation* out) const;
    ze_result_t find_range(const void* p, size_t size, Allocation* out) const;
    // Number of allocations.
    size_t count() const;
    // Removes and returns every allocation (for a backend that goes away).
    std::vector<Allocation> take_all();

    // The owning backend's name.
    const std::string& backend() const noexcept { return backend_; }

private:
    const std::string backend_;
    PointerRegistry own_;
};

// Where one operand of a copy lies, for the device that runs the copy.
enum class Placement {
    device,      // memory of the device itself (device, shared or imported)
    peer,        // device memory of another device of the same backend (contract §2.2)
    own_host,    // host memory of the device's backend: the fast (pinned) path
    other_host,  // host memory of another backend: copied as pageable memory
    system,      // memory no zehal allocation holds (malloc, the stack, a NumPy array):
                 // pageable; its bounds are the caller's
};

// True for operands the device copies as pageable memory (another backend's host memory,
// system memory).
inline bool is_pageable(Placement p) noexcept { return p == Placement::other_host || p == Placement::system; }

// True for device memory: the device's own, or a peer's.
inline bool is_device_memory(Placement p) noexcept { return p == Placement::device || p == Placement::peer; }

// One operand of a copy, found.
struct Operand {
    Allocation allocation;  // the allocation holding it (other_host: base, size, kind;
                            // system: the range asked for, kind host)
    Placement placement = Placement::device;
    bool zehal_allocation = true;  // false: system memory, or memory a backend recognised
    // Placement::peer: the device that owns the memory, kept alive while the operand is.
    std::shared_ptr<Device> peer;
    // Placement::peer: that device's registry of device memory, and its removals() read
    // before the allocation was looked up there (OperandCache keeps the operand while no
    // removal follows).
    const PointerRegistry* peer_memory = nullptr;
    uint64_t peer_removals = 0;
};

// Lists a device's registry of device memory process-wide while it lives, so that every
// device tells memory of another device (a peer operand, or refused where no copy path
// exists) from system memory (copied). A device holds one beside its registry, declared
// after it; `device` is the device that owns `memory` (null: memory of no device that
// peers may reach).
class DeviceMemoryListing {
public:
    explicit DeviceMemoryListing(const PointerRegistry& memory, const Device* device = nullptr);
    ~DeviceMemoryListing();
    DeviceMemoryListing(const DeviceMemoryListing&) = delete;
    DeviceMemoryListing& operator=(const DeviceMemoryListing&) = delete;

private:
    const PointerRegistry& memory_;
};

// Placement::peer on a device of `device_memory`: [p, p + size) in the memory of another
// device whose memory it copies (Device::copies_peer_memory). SUCCESS with *out (the owner in out->peer; with `held`, the
// allocation held as find_operand does); INVALID_SIZE past the end of its allocation;
// DEVICE_LOST when the owner is lost; INVALID_ARGUMENT when no copy path exists (a device of
// another backend or driver; a registry no device lists). nullopt when no other device holds p.
std::optional<ze_result_t> find_peer_operand(const PointerRegistry& device_memory, const void* p, size_t size,
                                             Operand* out, PointerRegistry::InFlight** held);

// A backend's way to recognise memory no zehal allocation holds as its own (on CUDA,
// memory another library allocated with the driver). Thread-safe.
class ForeignMemory {
public:
    // The placement of [p, p + size) when the backend knows the memory: SUCCESS with *out,
    // or the error that refuses it (INVALID_ARGUMENT: another device's memory; INVALID_SIZE:
    // past the end of that library's allocation). nullopt: not the backend's (system memory).
    virtual std::optional<ze_result_t> recognise(const void* p, size_t size, Operand* out) const = 0;

protected:
    ~ForeignMemory() = default;
};

// Places [p, p + size) for a device whose own allocations are `device_memory` and whose
// backend's host memory is `own_host`: SUCCESS with *out; INVALID_SIZE when the range runs
// past the end of the allocation holding p (or past the end of the address space);
// device memory of another device of the same backend is Placement::peer (DEVICE_LOST when
// that device is lost); INVALID_ARGUMENT for memory of a device of another backend, or a
// range not mapped in the process.
// Memory no zehal allocation holds is asked of `foreign` (when given), else is system
// memory (contract §2.2). A device's queues take this one decision for every operand. With
// `held`, the operand's allocation is also held on SUCCESS (PointerRegistry::hold_range):
// its free waits until PointerRegistry::release(*held); memory no zehal allocation holds is
// not held (*held null): the caller keeps it alive.
ze_result_t find_operand(const PointerRegistry& device_memory, const HostMemoryRegistry& own_host, const void* p,
                         size_t size, Operand* out, PointerRegistry::InFlight** held = nullptr,
                         const ForeignMemory* foreign = nullptr);

// find_operand() over one device's registries, with the last two operands found kept and
// reused while neither registry it searches (nor, for a peer's memory, the peer's registry)
// has removed an allocation since: a copy between the buffers of the copy before it (the
// usual loop) skips the look-ups. Not thread-safe: one per queue, under the queue's lock;
// the registries must outlive it.
class OperandCache {
public:
    OperandCache(const PointerRegistry& device_memory, const HostMemoryRegistry& own_host,
                 const ForeignMemory* foreign = nullptr) noexcept
        : device_memory_(device_memory),
          own_host_(own_host),
          foreign_(foreign) {}
    // As find_operand(device_memory, own_host, p, size, out, foreign). Only operands zehal
    // allocated are kept (nothing tells when other memory goes). A peer's memory is kept
    // without its device: a hit finds the device again, and misses once it is gone; whether
    // it is lost is left to the command (as for the device's own memory).
    ze_result_t find(const void* p, size_t size, Operand* out);

private:
    struct Entry {
        uint64_t device_removals = 0;  // the registries' removals() before the look-up
        uint64_t host_removals = 0;
        Operand operand;             // without its peer (operand.peer null)
        std::weak_ptr<Device> peer;  // Placement::peer: the owner
        bool valid = false;
    };
    // The operand of `e` when it holds [p, p + size): true with *out; false to look up.
    static bool hit(const Entry& e, uintptr_t p, size_t size, Operand* out);
    const PointerRegistry& device_memory_;
    const HostMemoryRegistry& own_host_;
    const ForeignMemory* const foreign_;
    Entry entries_[2];
    unsigned next_ = 0;  // the entry the next look-up replaces
};

}  // namespace zehal::hal
