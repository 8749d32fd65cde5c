// Areas (contract §2.2): map and unmap host, device or shared memory of one device.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "zehal/ze_result.h"
#include "aml/pool.hpp"
#include "hal/device.hpp"

namespace zehal::aml {

// Maps memory of one kind from one device with a fixed alignment and allocation flags,
// and remembers what it mapped, so that foreign or already unmapped pointers are refused.
// Every method is thread-safe. Results are ze_result_t; the C API translates them.
class Area {
public:
    // An area of `kind` memory of `device`. `ordinal` is the device's memory ordinal (host
    // areas: 0), `flags` the backend's allocation flags, `alignment` that of every mapped
    // pointer. INVALID_NULL_HANDLE for a null device; INVALID_ARGUMENT for an alignment
    // that is not a non-zero power of two (the HAL would say UNSUPPORTED_ALIGNMENT, the
    // AML layer says EINVAL), an ordinal past the device's memory ordinals, an unknown
    // kind or a null `out`.
    static ze_result_t create(const hal::DeviceRef& device, hal::MemoryKind kind, uint32_t ordinal, uint32_t flags,
                              size_t alignment, std::shared_ptr<Area>* out);
    // A host area of the default backend (through its first device): host memory usable
    // by every device of every backend. Registry errors pass through.
    static ze_result_t create_host(uint32_t flags, size_t alignment, std::shared_ptr<Area>* out);
    // A pooled area over `upstream` (contract §10): same kind, device and alignment, memory
    // kept and handed out again without a driver call (aml/pool.hpp). `initial_bytes` are
    // taken at once; the pool never holds more than `maximum_bytes` (0: no limit).
    // INVALID_NULL_HANDLE for a null or closed upstream; INVALID_ARGUMENT for an initial size
    // above the maximum; the upstream's error when the initial chunk cannot be had.
    static ze_result_t create_pool(std::shared_ptr<Area> upstream, size_t initial_bytes, size_t maximum_bytes,
                                   std::shared_ptr<Area>* out);

    // Frees what is still mapped.
    ~Area();
    Area(const Area&) = delete;
    Area& operator=(const Area&) = delete;

    // Maps `size` bytes into *out. Size 0: SUCCESS with *out = nullptr (nothing mapped).
    // INVALID_NULL_POINTER for a null out; INVALID_NULL_HANDLE once closed; else the
    // device's allocation result (OUT_OF_DEVICE_MEMORY, DEVICE_LOST, ...).
    ze_result_t map(size_t size, void** out);
    // Unmaps `ptr`. Null: SUCCESS. INVALID_ARGUMENT for a pointer this area did not map or
    // already unmapped (interior pointers included). Works after close().
    ze_result_t unmap(void* ptr);
    // unmap() of a mapping of `size` bytes (what map() was asked for): the fast path of a
    // pool. INVALID_ARGUMENT also when the size is not the mapping's.
    ze_result_t unmap(void* ptr, size_t size);
    // Device areas only: maps the pages of dma-buf `fd` (not taken over) as device memory
    // of `size` bytes, unmapped with unmap(). UNSUPPORTED_FEATURE for other kinds or where
    // the backend cannot import.
    ze_result_t import_dma_buf(int fd, size_t size, void** out);

    // Refuses later map() calls (INVALID_NULL_HANDLE); what is mapped stays valid.
    void close() noexcept;
    bool closed() const noexcept;

    // True when `ptr` is the start of a live mapping of this area; its size into *size.
    bool mapped(const void* ptr, size_t* size = nullptr) const;
    // Number of live mappings.
    size_t mapped_count() const;

    hal::MemoryKind kind() const noexcept { return kind_; }
    size_t alignment() const noexcept { return alignment_; }
    uint32_t flags() const noexcept { return flags_; }
    uint32_t ordinal() const noexcept { return ordinal_; }
    // The device it maps from (host areas: the device whose backend provides the memory).
    const hal::DeviceRef& device() const noexcept { return device_; }
    // The pool of a pooled area (statistics, trim); null for other areas.
    Pool* pool() const noexcept { return pool_.get(); }

    // Describes the area (kind, backend, device, alignment, flags), each line starting with
    // `prefix`.
    void describe(FILE* stream, const char* prefix) const;

private:
    Area(hal::DeviceRef device, hal::MemoryKind kind, uint32_t ordinal, uint32_t flags, size_t alignment);
    // Records a new mapping; when the table cannot grow, frees the memory and answers
    // OUT_OF_HOST_MEMORY, so a failed map leaks nothing.
    ze_result_t record(void* ptr, size_t size);

    const hal::DeviceRef device_;
    const hal::MemoryKind kind_;
    const uint32_t ordinal_;
    const uint32_t flags_;
    const size_t alignment_;

    mutable std::mutex mutex_;
    std::unordered_map<void*, size_t> mappings_;  // start -> bytes, guarded by mutex_ (not used by pools)
    std::atomic<bool> closed_{false};
    std::unique_ptr<Pool> pool_;  // pooled areas only; declared last: it goes first
};

// "host", "device" or "shared".
const char* kind_name(hal::MemoryKind kind) noexcept;

}  // namespace zehal::aml
