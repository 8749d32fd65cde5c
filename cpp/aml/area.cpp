#include "aml/area.hpp"

#include <new>
#include <utility>

#include "hal/registry.hpp"

namespace zehal::aml {

namespace {

bool power_of_two(size_t v) { return v != 0 && (v & (v - 1)) == 0; }

}  // namespace

const char* kind_name(hal::MemoryKind kind) noexcept {
    switch (kind) {
        case hal::MemoryKind::host:
            return "host";
        case hal::MemoryKind::device:
            return "device";
        case hal::MemoryKind::shared:
            return "shared";
    }
    return "unknown";
}

ze_result_t Area::create(const hal::DeviceRef& device, hal::MemoryKind kind, uint32_t ordinal, uint32_t flags,
                         size_t alignment, std::shared_ptr<Area>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (kind != hal::MemoryKind::host && kind != hal::MemoryKind::device && kind != hal::MemoryKind::shared)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!power_of_two(alignment)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (kind == hal::MemoryKind::host ? ordinal != 0 : ordinal >= device->properties().memory_ordinals)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    out->reset(new Area(device, kind, ordinal, flags, alignment));
    return ZE_RESULT_SUCCESS;
}

ze_result_t Area::create_host(uint32_t flags, size_t alignment, std::shared_ptr<Area>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!power_of_two(alignment)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    hal::DeviceRef device;
    if (ze_result_t r = hal::default_device(&device); r != ZE_RESULT_SUCCESS) return r;
    return create(device, hal::MemoryKind::host, 0, flags, alignment, out);
}

ze_result_t Area::create_pool(std::shared_ptr<Area> upstream, size_t initial_bytes, size_t maximum_bytes,
                              std::shared_ptr<Area>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!upstream || upstream->closed()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (maximum_bytes && initial_bytes > maximum_bytes) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::shared_ptr<Area> area(
        new Area(upstream->device_, upstream->kind_, upstream->ordinal_, upstream->flags_, upstream->alignment_));
    area->pool_ = std::make_unique<Pool>(std::move(upstream), maximum_bytes);
    if (ze_result_t r = area->pool_->reserve(initial_bytes); r != ZE_RESULT_SUCCESS) return r;
    *out = std::move(area);
    return ZE_RESULT_SUCCESS;
}

Area::Area(hal::DeviceRef device, hal::MemoryKind kind, uint32_t ordinal, uint32_t flags, size_t alignment)
    : device_(std::move(device)),
      kind_(kind),
      ordinal_(ordinal),
      flags_(flags),
      alignment_(alignment) {}

Area::~Area() {
    for (const auto& [ptr, size] : mappings_) device_->free(ptr);
}

ze_result_t Area::map(size_t size, void** out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (closed()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (size == 0) {
        *out = nullptr;
        return ZE_RESULT_SUCCESS;
    }
    if (pool_) return pool_->allocate(size, out);
    void* ptr = nullptr;
    if (ze_result_t r = device_->allocate(kind_, size, alignment_, flags_, ordinal_, &ptr); r != ZE_RESULT_SUCCESS)
        return r;
    if (ze_result_t r = record(ptr, size); r != ZE_RESULT_SUCCESS) return r;
    *out = ptr;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Area::record(void* ptr, size_t size) {
    try {
        std::lock_guard lock(mutex_);
        mappings_.emplace(ptr, size);
        return ZE_RESULT_SUCCESS;
    } catch (const std::bad_alloc&) {
        device_->free(ptr);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
}

ze_result_t Area::import_dma_buf(int fd, size_t size, void** out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (closed()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (kind_ != hal::MemoryKind::device || pool_) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    void* ptr = nullptr;
    if (ze_result_t r = device_->import_dma_buf(fd, size, &ptr); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = record(ptr, size); r != ZE_RESULT_SUCCESS) return r;
    *out = ptr;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Area::unmap(void* ptr, size_t size) {
    if (!ptr) return ZE_RESULT_SUCCESS;
    if (pool_) return pool_->deallocate(ptr, size);
    {
        std::lock_guard lock(mutex_);
        auto it = mappings_.find(ptr);
        if (it == mappings_.end() || it->second != size) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        mappings_.erase(it);
    }
    return device_->free(ptr);
}

ze_result_t Area::unmap(void* ptr) {
    if (!ptr) return ZE_RESULT_SUCCESS;
    if (pool_) return pool_->deallocate(ptr, 0);
    {
        std::lock_guard lock(mutex_);
        if (mappings_.erase(ptr) == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    return device_->free(ptr);
}

void Area::close() noexcept {
    // Release/acquire: map() after a close() that happened before it sees it.
    closed_.store(true, std::memory_order_release);
}

bool Area::closed() const noexcept { return closed_.load(std::memory_order_acquire); }

bool Area::mapped(const void* ptr, size_t* size) const {
    if (pool_) return pool_->find(ptr, size);
    std::lock_guard lock(mutex_);
    auto it = mappings_.find(const_cast<void*>(ptr));
    if (it == mappings_.end()) return false;
    if (size) *size = it->second;
    return true;
}

size_t Area::mapped_count() const {
    if (pool_) return pool_->stats().allocations;
    std::lock_guard lock(mutex_);
    return mappings_.size();
}

void Area::describe(FILE* stream, const char* prefix) const {
    const char* p = prefix ? prefix : "";
    const hal::DeviceProperties& props = device_->properties();
    const std::string backend(device_->backend_name());
    std::fprintf(stream, "%sarea: ze\n", p);
    std::fprintf(stream, "%skind: %s\n", p, kind_name(kind_));
    std::fprintf(stream, "%sbackend: %s\n", p, backend.c_str());
    std::fprintf(stream, "%sdevice: %s\n", p, props.name.c_str());
    std::fprintf(stream, "%sordinal: %u\n", p, ordinal_);
    std::fprintf(stream, "%salignment: %zu\n", p, alignment_);
    std::fprintf(stream, "%sflags: 0x%x\n", p, flags_);
    std::fprintf(stream, "%smapped: %zu\n", p, mapped_count());
    if (pool_) {
        const PoolStats st = pool_->stats();
        std::fprintf(stream, "%spool: %llu bytes in use, %llu reserved, %llu upstream allocations\n", p,
                     static_cast<unsigned long long>(st.bytes_in_use),
                     static_cast<unsigned long long>(st.bytes_reserved),
                     static_cast<unsigned long long>(st.upstream_allocations));
    }
}

}  // namespace zehal::aml
