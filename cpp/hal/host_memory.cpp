#include "hal/host_memory.hpp"

#include <cstdint>

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

}  // namespace

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
                         size_t size, Operand* out) {
    Operand found;
    ze_result_t r = device_memory.find_range(p, size, &found.allocation);
    if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT) {
        // Host memory of any backend: one look-up in the index, whose tag says whose it is
        // (the index has base, size and kind; what a backend needs to release it stays
        // with that backend).
        r = host_index().find_range(p, size, &found.allocation);
        found.placement = found.allocation.tag == owner_tag(&own_host) ? Placement::own_host : Placement::other_host;
        found.allocation.tag = 0;
    }
    if (r == ZE_RESULT_SUCCESS && out) *out = found;
    return r;
}

}  // namespace zehal::hal
