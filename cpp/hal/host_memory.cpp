#include "hal/host_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <shared_mutex>

#include "hal/device.hpp"

namespace zehal::hal {

namespace {

// Every backend's host allocations, each tagged with its HostMemoryRegistry. Never
// destroyed: backends' host memory may go during static destruction, after any other
// static would have.
PointerRegistry& host_index() {
    static PointerRegistry* const index = new PointerRegistry;
    return *index;
}

uintptr_t owner_tag(const HostMemoryRegistry* r) { return reinterpret_cast<uintptr_t>(r); }

// The users registered with add_lost_host_memory_user. Never destroyed, as the index.
struct LostUsers {
    std::mutex mu;
    std::vector<const LostHostMemoryUser*> users;  // guarded by mu
};

LostUsers& lost_users() {
    static LostUsers* const users = new LostUsers;
    return *users;
}

// One listed device: its registry of device memory and the device.
struct Listed {
    const PointerRegistry* memory;
    const Device* device;  // null: a registry of no device (tests)
};

// The registries of device memory of every device alive (DeviceMemoryListing). Never
// destroyed, as the index.
struct ListedDevices {
    std::shared_mutex mu;
    std::vector<Listed> registries;  // guarded by mu
};

ListedDevices& listed_devices() {
    static ListedDevices* const listed = new ListedDevices;
    return *listed;
}

// True when every page of [p, p + size) is mapped in the process (size > 0, no overflow).
// msync with MS_ASYNC flushes nothing on Linux; it fails with ENOMEM on an unmapped page:
// a stale or invented pointer is refused here instead of faulting in an engine.
bool mapped(const void* p, size_t size) {
    static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto first = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
    const uintptr_t end = reinterpret_cast<uintptr_t>(p) + size;
    return msync(reinterpret_cast<void*>(first), end - first, MS_ASYNC) == 0;
}

// Places memory that no zehal allocation holds (find_operand's last step).
ze_result_t place_unlisted(const PointerRegistry& device_memory, const void* p, size_t size,
                           const ForeignMemory* foreign, Operand* out, PointerRegistry::InFlight** held) {
    if (std::optional<ze_result_t> r = find_peer_operand(device_memory, p, size, out, held)) return *r;
    out->zehal_allocation = false;
    if (foreign)
        if (std::optional<ze_result_t> r = foreign->recognise(p, size, out)) return *r;
    const auto addr = reinterpret_cast<uintptr_t>(p);
    if (addr + size < addr) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (!mapped(p, size)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    out->placement = Placement::system;
    out->allocation = Allocation{};
    out->allocation.info.kind = MemoryKind::host;
    out->allocation.info.base = const_cast<void*>(p);
    out->allocation.info.size = size;
    return ZE_RESULT_SUCCESS;
}

// Returns once no lost user touches memory.
void wait_for_lost_users() {
    LostUsers& l = lost_users();
    std::lock_guard lock(l.mu);
    for (const LostHostMemoryUser* u : l.users) u->wait_idle();
}

}  // namespace

void add_lost_host_memory_user(const LostHostMemoryUser* user) {
    LostUsers& l = lost_users();
    std::lock_guard lock(l.mu);
    l.users.push_back(user);
}

void remove_lost_host_memory_user(const LostHostMemoryUser* user) noexcept {
    LostUsers& l = lost_users();
    std::lock_guard lock(l.mu);
    std::erase(l.users, user);
}

DeviceMemoryListing::DeviceMemoryListing(const PointerRegistry& memory, const Device* device) : memory_(memory) {
    ListedDevices& l = listed_devices();
    std::unique_lock lock(l.mu);
    l.registries.push_back(Listed{&memory_, device});
}

DeviceMemoryListing::~DeviceMemoryListing() {
    ListedDevices& l = listed_devices();
    std::unique_lock lock(l.mu);
    std::erase_if(l.registries, [this](const Listed& e) { return e.memory == &memory_; });
}

std::optional<ze_result_t> find_peer_operand(const PointerRegistry& device_memory, const void* p, size_t size,
                                             Operand* out, PointerRegistry::InFlight** held) {
    ListedDevices& l = listed_devices();
    // Declared before the lock, so released after it: the last reference to a device
    // destroys it, and its listing takes the lock exclusively.
    std::shared_ptr<Device> peer;
    // Shared: a listing goes (with its device's registry after it) only under the exclusive
    // lock, so every registry and device found here outlives the look-up.
    std::shared_lock lock(l.mu);
    const Device* self = nullptr;
    const Listed* owner = nullptr;
    for (const Listed& e : l.registries) {
        if (e.memory == &device_memory)
            self = e.device;
        else if (!owner && e.memory->find(p, nullptr))
            owner = &e;
    }
    if (!owner) return std::nullopt;
    // A device being destroyed has no owner left to lock: its memory is going too.
    if (owner->device) peer = std::const_pointer_cast<Device>(owner->device->weak_from_this().lock());
    if (!self || !peer || !self->copies_peer_memory(*peer)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    PointerInfo info;
    if (ze_result_t r = peer->pointer_info(p, &info); r == ZE_RESULT_ERROR_DEVICE_LOST) return r;
    Operand found;
    found.peer_removals = owner->memory->removals();
    const ze_result_t r = held ? owner->memory->hold_range(p, size, &found.allocation, held)
                               : owner->memory->find_range(p, size, &found.allocation);
    if (r != ZE_RESULT_SUCCESS) return r;
    found.placement = Placement::peer;
    found.peer = std::move(peer);
    found.peer_memory = owner->memory;
    *out = std::move(found);
    return ZE_RESULT_SUCCESS;
}

HostMemoryRegistry::HostMemoryRegistry(std::string_view backend) : backend_(backend) {}

HostMemoryRegistry::~HostMemoryRegistry() {
    for (const Allocation& a : own_.take_all()) host_index().remove(a.info.base, nullptr);
}

ze_result_t HostMemoryRegistry::insert(const Allocation& a) noexcept {
    if (a.info.kind != MemoryKind::host) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (ze_result_t r = own_.insert(a); r != ZE_RESULT_SUCCESS) return r;
    Allocation entry;
    entry.info = a.info;
    entry.tag = owner_tag(this);
    if (ze_result_t r = host_index().insert(entry); r != ZE_RESULT_SUCCESS) {
        own_.remove(a.info.base, nullptr);
        return r;
    }
    return ZE_RESULT_SUCCESS;
}

bool HostMemoryRegistry::remove(const void* base, Allocation* out) {
    if (!own_.remove(base, out)) return false;
    host_index().remove(base, nullptr);
    wait_for_lost_users();
    return true;
}

bool HostMemoryRegistry::find(const void* p, Allocation* out) const { return own_.find(p, out); }

ze_result_t HostMemoryRegistry::find_range(const void* p, size_t size, Allocation* out) const {
    return own_.find_range(p, size, out);
}

size_t HostMemoryRegistry::count() const { return own_.count(); }

std::vector<Allocation> HostMemoryRegistry::take_all() {
    std::vector<Allocation> all = own_.take_all();
    for (const Allocation& a : all) host_index().remove(a.info.base, nullptr);
    return all;
}

ze_result_t find_operand(const PointerRegistry& device_memory, const HostMemoryRegistry& own_host, const void* p,
                         size_t size, Operand* out, PointerRegistry::InFlight** held, const ForeignMemory* foreign) {
    Operand found;
    ze_result_t r = held ? device_memory.hold_range(p, size, &found.allocation, held)
                         : device_memory.find_range(p, size, &found.allocation);
    if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT) {
        // Host memory of any backend: one look-up in the index, whose tag says whose it is
        // (the index has base, size and kind; what a backend needs to release it stays
        // with that backend). Holds are taken there: every backend frees through it.
        r = held ? host_index().hold_range(p, size, &found.allocation, held)
                 : host_index().find_range(p, size, &found.allocation);
        found.placement = found.allocation.tag == owner_tag(&own_host) ? Placement::own_host : Placement::other_host;
        found.allocation.tag = 0;
    }
    if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT) {
        // Nothing of zehal's to hold: the caller keeps such memory alive.
        if (held) *held = nullptr;
        r = place_unlisted(device_memory, p, size, foreign, &found, held);
    }
    if (r == ZE_RESULT_SUCCESS && out) *out = found;
    return r;
}

bool OperandCache::hit(const Entry& e, uintptr_t p, size_t size, Operand* out) {
    const auto base = reinterpret_cast<uintptr_t>(e.operand.allocation.info.base);
    if (p < base || p - base >= e.operand.allocation.info.size) return false;
    std::shared_ptr<Device> peer;
    if (e.operand.placement == Placement::peer) {
        // Locked before the removals are read: the registry lives as long as its device.
        peer = e.peer.lock();
        if (!peer || e.operand.peer_memory->removals() != e.operand.peer_removals) return false;
    }
    // Past the end: the look-up names the error.
    if (size > e.operand.allocation.info.size - (p - base)) return false;
    if (out) {
        *out = e.operand;
        out->peer = std::move(peer);
    }
    return true;
}

ze_result_t OperandCache::find(const void* p, size_t size, Operand* out) {
    const uint64_t device_removals = device_memory_.removals();
    const uint64_t host_removals = host_index().removals();
    const auto addr = reinterpret_cast<uintptr_t>(p);
    for (const Entry& e : entries_) {
        if (!e.valid || e.device_removals != device_removals || e.host_removals != host_removals) continue;
        if (hit(e, addr, size, out)) return ZE_RESULT_SUCCESS;
    }
    Operand found;
    const ze_result_t r = find_operand(device_memory_, own_host_, p, size, &found, nullptr, foreign_);
    if (r != ZE_RESULT_SUCCESS) return r;
    // Only zehal's allocations are kept: their removal is seen; other memory's is not.
    if (found.zehal_allocation) {
        Entry& e = entries_[next_];
        e.operand = found;
        e.operand.peer.reset();
        e.peer = found.peer;
        e.valid = true;
        e.device_removals = device_removals;
        e.host_removals = host_removals;
        next_ ^= 1;
    }
    if (out) *out = std::move(found);
    return r;
}

}  // namespace zehal::hal
