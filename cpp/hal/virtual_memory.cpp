#include "hal/virtual_memory.hpp"

#include <iterator>
#include <new>
#include <utility>
#include <vector>

#include "hal/import_fd.hpp"

namespace zehal::hal {

namespace {

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }
void* pointer(uintptr_t a) { return reinterpret_cast<void*>(a); }

// How much an access allows: none < read-only < read-write.
int rank(MemoryAccess a) {
    switch (a) {
        case MemoryAccess::none:
            return 0;
        case MemoryAccess::read_only:
            return 1;
        case MemoryAccess::read_write:
            return 2;
    }
    return 0;
}

bool valid_access(MemoryAccess a) { return static_cast<uint32_t>(a) <= static_cast<uint32_t>(MemoryAccess::read_only); }

}  // namespace

ze_result_t VirtualMemory::check_range(const void* ptr, size_t size) const {
    if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const size_t page = do_page_size(0);
    if (address(ptr) % page) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (size == 0 || size % page) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (address(ptr) + size < address(ptr)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return ZE_RESULT_SUCCESS;
}

const VirtualMemory::Reservation* VirtualMemory::reservation_of(uintptr_t addr, size_t size) const {
    auto it = reservations_.upper_bound(addr);
    if (it == reservations_.begin()) return nullptr;
    --it;
    const size_t into = addr - it->first;
    if (into >= it->second.size || size > it->second.size - into) return nullptr;
    return &it->second;
}

VirtualMemory::Reservation* VirtualMemory::reservation_of(uintptr_t addr, size_t size) {
    return const_cast<Reservation*>(std::as_const(*this).reservation_of(addr, size));
}

template <typename Allowed>
bool VirtualMemory::covered(const Reservation& r, uintptr_t addr, size_t size, Allowed allowed) {
    const uintptr_t end = addr + size;
    auto it = r.mappings.upper_bound(addr);
    if (it == r.mappings.begin()) return size == 0;
    --it;
    uintptr_t cursor = addr;
    for (; cursor < end; ++it) {
        // Each mapping must start at or before the cursor (no hole) and reach past it.
        if (it == r.mappings.end() || it->first > cursor || it->first + it->second.size <= cursor) return false;
        if (!allowed(it->second.access)) return false;
        cursor = it->first + it->second.size;
    }
    return true;
}

bool VirtualMemory::splits(const Reservation& r, uintptr_t addr) {
    auto it = r.mappings.upper_bound(addr);
    if (it == r.mappings.begin()) return false;
    --it;
    return it->first < addr && it->first + it->second.size > addr;
}

bool VirtualMemory::tiles(const Reservation& r, uintptr_t addr, size_t size) {
    auto it = r.mappings.find(addr);
    if (it == r.mappings.end()) return false;
    const uintptr_t end = addr + size;
    for (uintptr_t cursor = addr; cursor < end; cursor += it->second.size, ++it)
        if (it == r.mappings.end() || it->first != cursor) return false;
    // The last mapping must end exactly at `end`.
    return std::prev(it)->first + std::prev(it)->second.size == end;
}

void VirtualMemory::wait_unheld(uintptr_t base) const { registry_.wait_unheld(pointer(base)); }

ze_result_t VirtualMemory::page_size(size_t size, size_t* out) const {
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *out = do_page_size(size);
    return ZE_RESULT_SUCCESS;
}

ze_result_t VirtualMemory::reserve(const void* hint, size_t size, void** out) {
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const size_t page = do_page_size(0);
    if (size == 0 || size % page) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    std::lock_guard control(control_mu_);
    void* base = nullptr;
    if (ze_result_t r = do_reserve(hint, size, do_page_size(size), &base); r != ZE_RESULT_SUCCESS) return r;
    Allocation a;
    a.info.kind = MemoryKind::device;
    a.info.base = base;
    a.info.size = size;
    a.info.alignment = do_page_size(size);
    ze_result_t r = registry_.insert(a);
    if (r == ZE_RESULT_SUCCESS) {
        try {
            std::unique_lock state(state_mu_);
            reservations_.emplace(address(base), Reservation{address(base), size, {}});
        } catch (const std::bad_alloc&) {
            registry_.remove(base, nullptr);
            r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
    }
    if (r != ZE_RESULT_SUCCESS) {
        do_free(base, size);
        return r;
    }
    *out = base;
    return ZE_RESULT_SUCCESS;
}

ze_result_t VirtualMemory::free(const void* ptr, size_t size) {
    if (ze_result_t r = check_range(ptr, size); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard control(control_mu_);
    Reservation taken;
    {
        std::shared_lock state(state_mu_);
        auto it = reservations_.find(address(ptr));
        if (it == reservations_.end() || it->second.size != size) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // Out of the registry first (no new command finds it), waiting for the commands on it.
    registry_.remove(ptr, nullptr);
    {
        std::unique_lock state(state_mu_);
        auto node = reservations_.extract(address(ptr));
        taken = std::move(node.mapped());
    }
    for (auto& [start, m] : taken.mappings) {
        do_unmap(pointer(start), m.size);
        m.physical->mappings_.fetch_sub(1, std::memory_order_relaxed);
    }
    do_free(const_cast<void*>(ptr), size);
    return do_lost() ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

ze_result_t VirtualMemory::create_physical(MemoryKind kind, size_t size, std::shared_ptr<PhysicalMemory>* out) {
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (kind != MemoryKind::device && kind != MemoryKind::host) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (size == 0 || size % do_page_size(0)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    std::shared_ptr<PhysicalMemory> made;
    if (ze_result_t r = do_create_physical(kind, size, &made); r != ZE_RESULT_SUCCESS) return r;
    made->owner_ = this;
    *out = std::move(made);
    return ZE_RESULT_SUCCESS;
}

ze_result_t VirtualMemory::import_physical(int fd, size_t size, std::shared_ptr<PhysicalMemory>* out) {
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0 || size % do_page_size(0)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    uint64_t bytes = 0;
    if (ze_result_t r = check_import_fd(fd, &bytes); r != ZE_RESULT_SUCCESS) return r;
    if (size > bytes) return ZE_RESULT_ERROR_INVALID_SIZE;
    std::shared_ptr<PhysicalMemory> made;
    if (ze_result_t r = do_import_physical(fd, size, &made); r != ZE_RESULT_SUCCESS) return r;
    made->owner_ = this;
    *out = std::move(made);
    return ZE_RESULT_SUCCESS;
}

ze_result_t VirtualMemory::destroy_physical(std::shared_ptr<PhysicalMemory>* physical) {
    if (!physical) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!*physical) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if ((*physical)->owner_ != this) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::lock_guard control(control_mu_);  // no map or unmap changes the count meanwhile
    if ((*physical)->mappings() != 0) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    physical->reset();
    return ZE_RESULT_SUCCESS;
}

ze_result_t VirtualMemory::map(const void* ptr, size_t size, const std::shared_ptr<PhysicalMemory>& physical,
                               size_t offset, MemoryAccess access) {
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (ze_result_t r = check_range(ptr, size); r != ZE_RESULT_SUCCESS) return r;
    if (!physical) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!valid_access(access)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (offset % do_page_size(0)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (physical->owner_ != this) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (offset > physical->size() || size > physical->size() - offset) return ZE_RESULT_ERROR_INVALID_SIZE;
    const uintptr_t addr = address(ptr);
    std::lock_guard control(control_mu_);
    Reservation* r = nullptr;
    {
        std::shared_lock state(state_mu_);
        r = reservation_of(addr, size);
        if (!r) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        // Any mapping overlapping [addr, addr + size): the last one starting before its end.
        auto next = r->mappings.lower_bound(addr + size);
        if (next != r->mappings.begin() && std::prev(next)->first + std::prev(next)->second.size > addr)
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // No command sees the range before the state below says it is mapped.
    if (ze_result_t res = do_map(const_cast<void*>(ptr), size, *physical, offset, access); res != ZE_RESULT_SUCCESS)
        return res;
    try {
        std::unique_lock state(state_mu_);
        r->mappings.emplace(addr, Mapping{size, physical, offset, access});
    } catch (const std::bad_alloc&) {
        do_unmap(const_cast<void*>(ptr), size);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    physical->mappings_.fetch_add(1, std::memory_order_relaxed);
    return ZE_RESULT_SUCCESS;
}

ze_result_t VirtualMemory::unmap(const void* ptr, size_t size) {
    if (ze_result_t r = check_range(ptr, size); r != ZE_RESULT_SUCCESS) return r;
    const uintptr_t addr = address(ptr);
    std::lock_guard control(control_mu_);
    std::vector<std::pair<uintptr_t, Mapping>> taken;
    uintptr_t base = 0;
    {
        std::unique_lock state(state_mu_);
        Reservation* r = reservation_of(addr, size);
        if (!r || splits(*r, addr) || splits(*r, addr + size)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        base = r->base;
        try {
            for (auto it = r->mappings.lower_bound(addr); it != r->mappings.end() && it->first < addr + size;)
                taken.emplace_back(it->first, std::move(it->second)), it = r->mappings.erase(it);
        } catch (const std::bad_alloc&) {
            for (auto& [start, m] : taken) r->mappings.emplace(start, std::move(m));
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
    }
    if (taken.empty()) return do_lost() ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
    // New commands on the range are refused from here on; those queued before finish first.
    wait_unheld(base);
    ze_result_t result = ZE_RESULT_SUCCESS;
    for (auto& [start, m] : taken) {
        if (ze_result_t r = do_unmap(pointer(start), m.size); r != ZE_RESULT_SUCCESS) result = r;
        m.physical->mappings_.fetch_sub(1, std::memory_order_relaxed);
    }
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return result;
}

ze_result_t VirtualMemory::set_access(const void* ptr, size_t size, MemoryAccess access) {
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (ze_result_t r = check_range(ptr, size); r != ZE_RESULT_SUCCESS) return r;
    if (!valid_access(access)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    const uintptr_t addr = address(ptr);
    std::lock_guard control(control_mu_);
    Reservation* r = nullptr;
    {
        std::shared_lock state(state_mu_);
        r = reservation_of(addr, size);
        if (!r || !tiles(*r, addr, size)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    // Wider access is granted before commands may count on it; narrower access is taken away
    // only once the commands queued under the wider one are over.
    bool narrowed = false;
    for (auto it = r->mappings.find(addr); it != r->mappings.end() && it->first < addr + size; ++it) {
        Mapping& m = it->second;
        if (rank(access) > rank(m.access)) {
            if (ze_result_t res = do_protect(pointer(it->first), m.size, *m.physical, access); res != ZE_RESULT_SUCCESS)
                return res;
        } else if (rank(access) < rank(m.access)) {
            narrowed = true;
        }
        std::unique_lock state(state_mu_);
        m.access = access;
    }
    if (!narrowed) return ZE_RESULT_SUCCESS;
    wait_unheld(r->base);
    ze_result_t result = ZE_RESULT_SUCCESS;
    for (auto it = r->mappings.find(addr); it != r->mappings.end() && it->first < addr + size; ++it)
        if (ze_result_t res = do_protect(pointer(it->first), it->second.size, *it->second.physical, access);
            res != ZE_RESULT_SUCCESS)
            result = res;
    return result;
}

ze_result_t VirtualMemory::get_access(const void* ptr, size_t size, MemoryAccess* access, size_t* out_size) const {
    if (do_lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (ze_result_t r = check_range(ptr, size); r != ZE_RESULT_SUCCESS) return r;
    if (!access || !out_size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const uintptr_t addr = address(ptr);
    std::shared_lock state(state_mu_);
    const Reservation* r = reservation_of(addr, size);
    if (!r) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const uintptr_t reservation_end = r->base + r->size;
    auto it = r->mappings.upper_bound(addr);
    const bool mapped = it != r->mappings.begin() && std::prev(it)->first + std::prev(it)->second.size > addr;
    uintptr_t end = addr;
    if (!mapped) {
        // Unmapped pages up to the next mapping.
        end = it == r->mappings.end() ? reservation_end : it->first;
        *access = MemoryAccess::none;
    } else {
        // Adjacent mappings with the same access.
        --it;
        *access = it->second.access;
        end = it->first + it->second.size;
        for (++it; it != r->mappings.end() && it->first == end && it->second.access == *access; ++it)
            end = it->first + it->second.size;
    }
    *out_size = end - addr;
    return ZE_RESULT_SUCCESS;
}

bool VirtualMemory::holds(const void* p) const { return registry_.find(p, nullptr); }

ze_result_t VirtualMemory::find_operand(const void* p, size_t size, OperandUse use, Allocation* out,
                                        PointerRegistry::InFlight** held) const {
    Allocation found;
    PointerRegistry::InFlight* hold = nullptr;
    ze_result_t r = held ? registry_.hold_range(p, size, &found, &hold) : registry_.find_range(p, size, &found);
    if (r != ZE_RESULT_SUCCESS) return r;
    // After the hold (see unmap): a change made before this look-up is seen; one made after
    // it waits for the hold.
    bool ok = false;
    {
        std::shared_lock state(state_mu_);
        const Reservation* reservation = reservation_of(address(p), size);
        ok = reservation && covered(*reservation, address(p), size, [use](MemoryAccess a) {
                 return a == MemoryAccess::read_write || (use == OperandUse::read && a == MemoryAccess::read_only);
             });
    }
    if (!ok) {
        PointerRegistry::release(hold);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    if (out) *out = found;
    if (held) *held = hold;
    return ZE_RESULT_SUCCESS;
}

bool VirtualMemory::pointer_info(const void* p, PointerInfo* out) const {
    Allocation a;
    if (!registry_.find(p, &a)) return false;
    if (out) *out = a.info;
    return true;
}

ze_result_t VirtualMemory::physical_at(const void* p, std::shared_ptr<PhysicalMemory>* physical, size_t* offset) const {
    if (!p || !physical || !offset) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::shared_lock state(state_mu_);
    const Reservation* r = reservation_of(address(p), 1);
    if (!r) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // The mapping holding `p`: the last one starting at or before it, if it reaches `p`.
    auto it = r->mappings.upper_bound(address(p));
    if (it == r->mappings.begin()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    --it;
    if (address(p) - it->first >= it->second.size) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *physical = it->second.physical;
    *offset = it->second.offset + (address(p) - it->first);
    return ZE_RESULT_SUCCESS;
}

size_t VirtualMemory::reservations() const { return registry_.count(); }

void VirtualMemory::release_all() noexcept {
    std::lock_guard control(control_mu_);
    std::unique_lock state(state_mu_);
    registry_.take_all();
    for (auto& [base, r] : reservations_) {
        for (auto& [start, m] : r.mappings) {
            do_unmap(pointer(start), m.size);
            m.physical->mappings_.fetch_sub(1, std::memory_order_relaxed);
        }
        do_free(pointer(base), r.size);
    }
    reservations_.clear();
}

}  // namespace zehal::hal
