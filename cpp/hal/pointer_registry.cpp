#include "hal/pointer_registry.hpp"

#include <mutex>
#include <new>
#include <shared_mutex>

namespace zehal::hal {

namespace {
uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Bit of an InFlight count: a remove() waits for the count to reach zero.
constexpr uint32_t kRemoverWaits = 1u << 31;

// Bumped (and waited on) when a waited-for count reaches zero. One word for every registry,
// so that release() never touches an entry after its last decrement (the remover may free
// it at once); waits are rare (a free of memory still in use), so sharing costs nothing.
std::atomic<uint32_t> g_counts_drained{0};

// Returns once `count` is zero (its remover bit set here).
void wait_until_unused(PointerRegistry::InFlight& count) {
    // seq_cst, as every access below and release()'s: in their single total order, either
    // the last release sees the bit (and bumps the word after its decrement), or this
    // thread sees the count at zero. Acquire too: the commands' accesses happen before.
    count.fetch_or(kRemoverWaits, std::memory_order_seq_cst);
    for (;;) {
        const uint32_t seen = g_counts_drained.load(std::memory_order_seq_cst);
        if ((count.load(std::memory_order_seq_cst) & ~kRemoverWaits) == 0) return;
        g_counts_drained.wait(seen, std::memory_order_seq_cst);
    }
}
}  // namespace

std::map<uintptr_t, PointerRegistry::Entry>::const_iterator PointerRegistry::holding(uintptr_t addr) const {
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
        // Release: a look-up that learnt of the allocation after this returned sees it.
        size_.store(by_base_.size(), std::memory_order_release);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

bool PointerRegistry::remove(const void* base, Allocation* out) {
    std::map<uintptr_t, Entry>::node_type node;
    {
        std::unique_lock lock(mu_);
        auto it = by_base_.find(address(base));
        if (it == by_base_.end()) return false;
        node = by_base_.extract(it);
        // Relaxed: a look-up that sees the smaller count finds nothing, as under the lock.
        size_.store(by_base_.size(), std::memory_order_relaxed);
        // Release: pairs with removals()' acquire.
        removals_.fetch_add(1, std::memory_order_release);
    }
    // No look-up finds it any more, so no hold starts; wait for those taken before.
    wait_until_unused(node.mapped().in_flight);
    if (out) *out = node.mapped();
    return true;
}

bool PointerRegistry::empty() const noexcept { return count() == 0; }

bool PointerRegistry::find(const void* p, Allocation* out) const {
    if (empty()) return false;
    std::shared_lock lock(mu_);
    auto it = holding(address(p));
    if (it == by_base_.end()) return false;
    if (out) *out = it->second;
    return true;
}

ze_result_t PointerRegistry::find_range(const void* p, size_t size, Allocation* out) const {
    const uintptr_t addr = address(p);
    if (empty()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::shared_lock lock(mu_);
    auto it = holding(addr);
    if (it == by_base_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const size_t room = it->second.info.size - (addr - it->first);
    if (size > room) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (out) *out = it->second;
    return ZE_RESULT_SUCCESS;
}

ze_result_t PointerRegistry::hold_range(const void* p, size_t size, Allocation* out, InFlight** held) const {
    const uintptr_t addr = address(p);
    if (empty()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::shared_lock lock(mu_);
    auto it = holding(addr);
    if (it == by_base_.end()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const size_t room = it->second.info.size - (addr - it->first);
    if (size > room) return ZE_RESULT_ERROR_INVALID_SIZE;
    // Under the shared lock: remove() cannot have taken the entry out (it takes the lock
    // exclusively), so it sees this hold. Relaxed: the lock orders it before the removal.
    it->second.in_flight.fetch_add(1, std::memory_order_relaxed);
    if (out) *out = it->second;
    *held = &it->second.in_flight;
    return ZE_RESULT_SUCCESS;
}

void PointerRegistry::release(InFlight* held) noexcept {
    if (!held) return;
    // seq_cst: see wait_until_unused(); release too, so the command's accesses happen before
    // the remover's unmap. After this decrement `held` may be gone: only the word is touched.
    if (held->fetch_sub(1, std::memory_order_seq_cst) == (kRemoverWaits | 1)) {
        g_counts_drained.fetch_add(1, std::memory_order_seq_cst);
        g_counts_drained.notify_all();
    }
}

void PointerRegistry::wait_unheld(const void* base) const {
    InFlight* count = nullptr;
    {
        std::shared_lock lock(mu_);
        auto it = by_base_.find(address(base));
        if (it == by_base_.end()) return;
        count = &it->second.in_flight;  // stays: the caller removes nothing meanwhile
    }
    wait_until_unused(*count);
    // seq_cst, as wait_until_unused(): later releases stop bumping the shared word.
    count->fetch_and(~kRemoverWaits, std::memory_order_seq_cst);
}

uint32_t PointerRegistry::in_flight(const void* p) const {
    std::shared_lock lock(mu_);
    auto it = holding(address(p));
    // Relaxed: a snapshot for tests.
    return it == by_base_.end() ? 0 : it->second.in_flight.load(std::memory_order_relaxed) & ~kRemoverWaits;
}

size_t PointerRegistry::count() const noexcept {
    // Acquire: pairs with insert()'s release.
    return size_.load(std::memory_order_acquire);
}

std::vector<Allocation> PointerRegistry::take_all() {
    std::unique_lock lock(mu_);
    std::vector<Allocation> all;
    all.reserve(by_base_.size());
    for (auto& [base, a] : by_base_) all.push_back(a);
    by_base_.clear();
    size_.store(0, std::memory_order_relaxed);                   // relaxed: as in remove()
    removals_.fetch_add(all.size(), std::memory_order_release);  // release: see remove()
    return all;
}

std::vector<Allocation> PointerRegistry::take_all_unused() {
    std::map<uintptr_t, Entry> taken;
    {
        std::unique_lock lock(mu_);
        // The nodes move as they are: the counts that holds point to stay where they are.
        taken.swap(by_base_);
        size_.store(0, std::memory_order_relaxed);                     // relaxed: as in remove()
        removals_.fetch_add(taken.size(), std::memory_order_release);  // release: see remove()
    }
    std::vector<Allocation> all;
    all.reserve(taken.size());
    for (auto& [base, e] : taken) {
        // No look-up finds them any more, so no hold starts; wait for those taken before.
        wait_until_unused(e.in_flight);
        all.push_back(e);
    }
    return all;
}

}  // namespace zehal::hal
