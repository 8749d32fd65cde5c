// zehal's public C++ API: areas (AML's) and the memory they map.
#pragma once

#include <aml.h>
#include <aml/area/ze.h>
// ze_pool.h names a function and a struct alike (aml_area_ze_pool_stats), which C++'s
// -Wshadow reports in a tool's own build: quiet for this include only.
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wshadow"
#endif
#include <aml/area/ze_pool.h>
#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
#include <zehal/device.hpp>
#include <zehal/error.hpp>

#include <cstddef>
#include <memory>
#include <utility>

namespace zehal {

class Area;

// One mapping of an Area, unmapped when it goes (move-only). Keeps its area alive.
class Buffer {
public:
    Buffer() = default;
    Buffer(Buffer&& other) noexcept { *this = std::move(other); }
    Buffer& operator=(Buffer&& other) noexcept {
        if (this != &other) {
            reset();
            area_ = std::move(other.area_);
            ptr_ = std::exchange(other.ptr_, nullptr);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ~Buffer() { reset(); }

    // The mapped memory (device memory is not host-accessible: copy it with a Dma).
    void* data() const noexcept { return ptr_; }
    // Its size in bytes.
    size_t size() const noexcept { return size_; }
    // Unmaps now (nothing when empty).
    void reset() noexcept {
        if (ptr_) aml_area_munmap(area_.get(), ptr_, size_);
        ptr_ = nullptr;
        size_ = 0;
        area_.reset();
    }

private:
    friend class Area;
    Buffer(std::shared_ptr<aml_area> area, void* ptr, size_t size) : area_(std::move(area)), ptr_(ptr), size_(size) {}
    std::shared_ptr<aml_area> area_;
    void* ptr_ = nullptr;
    size_t size_ = 0;
};

// An AML area of zehal: device, shared or host memory with a fixed alignment (a power of
// two). Copyable: copies share the area.
class Area {
public:
    // Device memory of `device` (memory ordinal `ordinal`).
    static Area device(const Device& device, size_t alignment = 64, uint32_t ordinal = 0) {
        return make_device(device, alignment, ordinal, AML_AREA_ZE_MMAP_DEVICE_FLAGS, "zehal::Area::device");
    }
    // Shared (unified) memory of `device`.
    static Area shared(const Device& device, size_t alignment = 64) {
        return make_device(device, alignment, 0, AML_AREA_ZE_MMAP_SHARED_FLAGS, "zehal::Area::shared");
    }
    // Host memory, usable by every device.
    static Area host(size_t alignment = 64) {
        aml_area* a = nullptr;
        detail::check_aml(aml_area_ze_host_create(&a, 0, alignment), "zehal::Area::host");
        return Area(a);
    }

    // Maps `bytes` (> 0).
    Buffer map(size_t bytes) const {
        void* p = aml_area_mmap(area_.get(), bytes, nullptr);
        if (!p) detail::check_aml(bytes ? -aml_errno : -AML_EINVAL, "zehal::Area::map");
        return Buffer(area_, p, bytes);
    }
    // The C area, for the AML C API.
    aml_area* handle() const noexcept { return area_.get(); }

protected:
    explicit Area(std::shared_ptr<aml_area> area) : area_(std::move(area)) {}

private:
    static Area make_device(const Device& device, size_t alignment, uint32_t ordinal, int flags, const char* what) {
        aml_area* a = nullptr;
        detail::check_aml(aml_area_ze_device_create(&a, device.handle(), ordinal, 0, alignment, flags), what);
        return Area(a);
    }
    explicit Area(aml_area* a) : area_(a, [](aml_area* p) { aml_area_ze_destroy(&p); }) {}
    std::shared_ptr<aml_area> area_;
};

// What a pooled area holds and has done (aml_area_ze_pool_stats: bytes in use and their
// peak, bytes reserved, live and total mappings, upstream allocations, cache hits).
using PoolStats = struct ::aml_area_ze_pool_stats;

// A pooled area (docs/pool.md): maps from memory it keeps, taken from `upstream` in large
// chunks, so that a map costs no driver call. Kind, device and alignment are the
// upstream's. Copyable: copies share the pool, which keeps its upstream alive and gives its
// memory back once its last copy and its last Buffer are gone. Thread-safe.
class PooledArea : public Area {
public:
    // initial_bytes: taken from upstream at once (0: none until the first map);
    // maximum_bytes: the most the pool ever holds (0: no limit; a map beyond it throws
    // OUT_OF_HOST_MEMORY and changes nothing).
    explicit PooledArea(const Area& upstream, size_t initial_bytes = 0, size_t maximum_bytes = 0)
        : Area(make(upstream, initial_bytes, maximum_bytes)) {}

    // What the pool holds and has done, every field of one instant.
    PoolStats stats() const {
        PoolStats s{};
        detail::check_aml(aml_area_ze_pool_stats(handle(), &s), "zehal::PooledArea::stats");
        return s;
    }
    // Gives back to upstream every chunk nothing is mapped from.
    void trim() { detail::check_aml(aml_area_ze_pool_trim(handle()), "zehal::PooledArea::trim"); }

private:
    static std::shared_ptr<aml_area> make(const Area& upstream, size_t initial_bytes, size_t maximum_bytes) {
        aml_area* p = nullptr;
        detail::check_aml(aml_area_ze_pool_create(&p, upstream.handle(), initial_bytes, maximum_bytes),
                          "zehal::PooledArea");
        // The deleter holds the upstream: it outlives the pool, as aml_area_ze_pool_create asks.
        return std::shared_ptr<aml_area>(p, [keep = upstream](aml_area* q) { aml_area_ze_pool_destroy(&q); });
    }
};

}  // namespace zehal
