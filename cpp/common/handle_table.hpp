// Live objects behind opaque C handles. A handle is a number never given out twice, so a
// destroyed handle never reaches a newer object and is told apart from a value never given
// out. Used by the C API and the Level Zero driver.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "zehal/ze_result.h"
#include "common/shared_spin_lock.hpp"

namespace zehal {

// Every method is thread-safe; lookups share the lock (SharedSpinLock: a look-up is one
// atomic add and subtract).
template <typename T>
class HandleTable {
public:
    // Keeps `object` alive under a new handle value.
    uintptr_t add(std::shared_ptr<T> object) {
        std::unique_lock lock(mu_);
        const uintptr_t id = ++last_;
        live_.emplace(id, std::move(object));
        return id;
    }
    // The object of `handle`: INVALID_NULL_HANDLE for null or destroyed handles,
    // INVALID_ARGUMENT for values never given out.
    ze_result_t get(const void* handle, std::shared_ptr<T>* out) const {
        const auto id = reinterpret_cast<uintptr_t>(handle);
        if (id == 0) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        std::shared_lock lock(mu_);
        if (auto it = live_.find(id); it != live_.end()) {
            *out = it->second;
            return ZE_RESULT_SUCCESS;
        }
        return id <= last_ ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE : ZE_RESULT_ERROR_INVALID_ARGUMENT;
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
    mutable SharedSpinLock mu_;
    uintptr_t last_ = 0;
    std::unordered_map<uintptr_t, std::shared_ptr<T>> live_;
};

}  // namespace zehal
