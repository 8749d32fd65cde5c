// Live objects behind opaque C handles. Every table of the process draws its handle values
// from one numbering, and a value is never given out twice: a destroyed handle never
// reaches a newer object, and a handle of one kind is never found in another kind's table.
// Used by the C API and the Level Zero driver.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "zehal/ze_result.h"
#include "common/shared_spin_lock.hpp"

namespace zehal {

// The last handle value given out by any table (0: none yet).
inline std::atomic<uintptr_t>& last_handle_value() {
    static std::atomic<uintptr_t> last{0};
    return last;
}

// A new handle value, unique in the process (never 0). Relaxed: the value only has to be
// unique; the table's lock orders the object's publication.
inline uintptr_t next_handle_value() { return last_handle_value().fetch_add(1, std::memory_order_relaxed) + 1; }

// Whether `value` was given out by some table (it may be destroyed since, or of any kind).
// Relaxed: a value handed out is already visible to the thread that passes it in.
inline bool was_handed_out(uintptr_t value) {
    return value != 0 && value <= last_handle_value().load(std::memory_order_relaxed);
}

// Every method is thread-safe; lookups share the lock (SharedSpinLock: a look-up is one
// atomic add and subtract).
template <typename T>
class HandleTable {
public:
    // `unknown` is what get() answers for a value no table ever gave out.
    explicit HandleTable(ze_result_t unknown = ZE_RESULT_ERROR_INVALID_ARGUMENT) : unknown_(unknown) {}

    // Keeps `object` alive under a new handle value.
    uintptr_t add(std::shared_ptr<T> object) {
        std::unique_lock lock(mu_);
        const uintptr_t id = next_handle_value();
        live_.emplace(id, std::move(object));
        return id;
    }
    // The object of `handle`: INVALID_NULL_HANDLE for null, destroyed handles and handles of
    // another table; the table's `unknown` answer for values never given out.
    ze_result_t get(const void* handle, std::shared_ptr<T>* out) const {
        const auto id = reinterpret_cast<uintptr_t>(handle);
        if (id == 0) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        {
            std::shared_lock lock(mu_);
            if (auto it = live_.find(id); it != live_.end()) {
                *out = it->second;
                return ZE_RESULT_SUCCESS;
            }
        }
        return was_handed_out(id) ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE : unknown_;
    }
    // Forgets `handle` and hands its object back (null when it was not live).
    std::shared_ptr<T> remove(const void* handle) {
        std::unique_lock lock(mu_);
        auto it = live_.find(reinterpret_cast<uintptr_t>(handle));
        if (it == live_.end()) return nullptr;
        std::shared_ptr<T> object = std::move(it->second);
        live_.erase(it);
        return object;
    }

private:
    const ze_result_t unknown_;
    mutable SharedSpinLock mu_;
    std::unordered_map<uintptr_t, std::shared_ptr<T>> live_;
};

}  // namespace zehal
