// What the AML C API's handles are in C++: each C struct (ops + data) is the base of a
// handle that owns the C++ object its data points to. Internal to cpp/aml.
#pragma once

#include <memory>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "aml.h"
#include "aml/area.hpp"
#include "aml/dma.hpp"
#include "aml/errors.hpp"
#include "aml/layout.hpp"
#include "aml/request.hpp"
#include "hal/device.hpp"

namespace zehal::aml::capi {

// struct aml_area of a zehal area; data is impl.get().
struct AreaHandle : aml_area {
    std::shared_ptr<Area> impl;
};

// struct aml_layout of a dense layout; data is impl.get().
struct LayoutHandle : aml_layout {
    std::unique_ptr<Layout> impl;
};

// struct aml_dma of a zehal engine; data is the handle itself, which also owns the
// requests handed out to C callers until they wait for or cancel them.
struct DmaHandle : aml_dma {
    using Held = std::unordered_map<const void*, std::shared_ptr<Request>>;
    // Nodes of `held` kept for reuse at most.
    static constexpr size_t kSpareNodes = 64;

    DmaHandle() { spare.reserve(kSpareNodes); }

    std::shared_ptr<Dma> impl;
    std::mutex mutex;
    // Handle pointer -> request, guarded by mutex. Keyed by the pointer the caller holds,
    // so a foreign or freed handle is refused without being dereferenced.
    Held held;
    // Nodes of `held` left by requests waited for or destroyed, reused by the next ones so
    // that a request costs no allocation here; guarded by mutex.
    std::vector<Held::node_type> spare;
};

inline Area* area_of(const aml_area_data* data) noexcept {
    return reinterpret_cast<Area*>(const_cast<aml_area_data*>(data));
}
inline const Layout* layout_of(const aml_layout_data* data) noexcept { return reinterpret_cast<const Layout*>(data); }
inline DmaHandle* dma_of(const aml_dma_data* data) noexcept {
    return reinterpret_cast<DmaHandle*>(const_cast<aml_dma_data*>(data));
}

// The device of a C handle as a shared reference; null for a null handle.
hal::DeviceRef device_ref(zehal_device_t handle) noexcept;

// Runs `f` (returning an AML code); -AML_ENOMEM when it runs out of memory, since no C++
// exception may cross the C API.
template <typename F>
int guarded(F&& f) noexcept {
    try {
        return f();
    } catch (const std::bad_alloc&) {
        return -AML_ENOMEM;
    } catch (...) {
        return -AML_FAILURE;
    }
}

}  // namespace zehal::aml::capi
