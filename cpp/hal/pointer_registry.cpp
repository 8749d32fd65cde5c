#include "hal/pointer_registry.hpp"

#include <mutex>
#include <new>
#include <shared_mutex>

namespace zehal::hal {

namespace {
uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }
}  // namespace

std::map<uintptr_t, Allocation>::const_iterator PointerRegistry::holding(uintptr_t addr) const {
    auto it = by_base_.upper_bound(addr);
    if (it == by_base_.begin()) return by_base_.end();
    --it;
    if (addr - it->first >= it->second.info.size) return by_base_.end();
    return it;
}

ze_result_t PointerRegistry::insert(const Allocation& a) noexcept {
    const uintptr_t base = address(a.info.base);
    if (a.info.size == 0 || base + a.info.size < base) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::unique_lock lock(mu_);
    auto next = by_base_.lower_bound(base);
    if (next != by_base_.end() && next->first < base + a.info.size) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (holding(base) != by_base_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    try {
        by_base_.emplace_hint(next, base, a);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

bool PointerRegistry::remove(const void* base, Allocation* out) {
    std::unique_lock lock(mu_);
    auto it = by_base_.find(address(base));
    if (it == by_base_.end()) return false;
    if (out) *out = it->second;
    by_base_.erase(it);
    // Release: pairs with removals()' acquire.
    removals_.fetch_add(1, std::memory_order_release);
    return true;
}

bool PointerRegistry::find(const void* p, Allocation* out) const {
    std::shared_lock lock(mu_);
    auto it = holding(address(p));
    if (it == by_base_.end()) return false;
    if (out) *out = it->second;
    return true;
}

ze_result_t PointerRegistry::find_range(const void* p, size_t size, Allocation* out) const {
    const uintptr_t addr = address(p);
    std::shared_lock lock(mu_);
    auto it = holding(addr);
    if (it == by_base_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const size_t room = it->second.info.size - (addr - it->first);
    if (size > room) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (out) *out = it->second;
    return ZE_RESULT_SUCCESS;
}

size_t PointerRegistry::count() const {
    std::shared_lock lock(mu_);
    return by_base_.size();
}

std::vector<Allocation> PointerRegistry::take_all() {
    std::unique_lock lock(mu_);
    std::vector<Allocation> all;
    all.reserve(by_base_.size());
    for (auto& [base, a] : by_base_) all.push_back(a);
    by_base_.clear();
    removals_.fetch_add(all.size(), std::memory_order_release);  // release: see remove()
    return all;
}

}  // namespace zehal::hal
