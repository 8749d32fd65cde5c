#include "hal/kernel_state.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace zehal::hal {

namespace {

// Words of storage an argument takes (pointers and local sizes 8 bytes).
size_t words_of(const KernelArg& arg) noexcept {
    const size_t bytes = arg.kind == KernelArgKind::value ? arg.size : sizeof(uint64_t);
    return std::max<size_t>(1, (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
}

// The largest divisor of `n` that is at most `limit` (>= 1).
uint32_t largest_divisor(uint32_t n, uint32_t limit) noexcept {
    for (uint32_t d = std::min(n, std::max<uint32_t>(limit, 1)); d > 1; --d)
        if (n % d == 0) return d;
    return 1;
}

}  // namespace

const void* LaunchSnapshot::pointer(size_t i) const noexcept {
    uint64_t address = 0;
    std::memcpy(&address, values[i], sizeof address);
    return reinterpret_cast<const void*>(static_cast<uintptr_t>(address));
}

ze_result_t check_group_count(const GroupCount& groups, const DeviceProperties& device) noexcept {
    for (size_t d = 0; d < 3; ++d)
        if (groups[d] == 0 || groups[d] > device.max_group_count[d])
            return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    return ZE_RESULT_SUCCESS;
}

KernelState::KernelState(KernelProperties props, const KernelLimits& limits)
    : props_(std::move(props)),
      limits_(limits),
      local_sizes_(props_.args.size(), 0),
      set_(props_.args.size(), false) {
    if (props_.max_group_size == 0 || props_.max_group_size > limits_.max_group_size)
        props_.max_group_size = limits_.max_group_size;
    // A kernel that declares its group size runs with no other.
    if (props_.required_group_size[0] != 0)
        props_.max_group_size = std::min(props_.max_group_size, props_.required_group_size[0] *
                                                                    props_.required_group_size[1] *
                                                                    props_.required_group_size[2]);
    size_t words = 0;
    for (const KernelArg& arg : props_.args) {
        offsets_.push_back(words * sizeof(uint64_t));
        words += words_of(arg);
    }
    storage_.assign(words, 0);
    if (props_.required_group_size[0] != 0) group_size_ = props_.required_group_size;
}

ze_result_t KernelState::set_argument(uint32_t index, size_t size, const void* value) {
    if (index >= props_.args.size()) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX;
    const KernelArg& arg = props_.args[index];
    uint64_t pointer = 0;
    switch (arg.kind) {
        case KernelArgKind::value:
            if (size != arg.size) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
            if (!value) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            break;
        case KernelArgKind::global:
        case KernelArgKind::constant:
            if (size != sizeof(uint64_t)) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
            // Null `value`: a null pointer (Level Zero's convention for a null buffer).
            if (value) std::memcpy(&pointer, value, sizeof pointer);
            value = &pointer;
            break;
        case KernelArgKind::local:
            if (size == 0 || size > limits_.max_local_bytes) return ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE;
            if (value) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
            break;
        case KernelArgKind::image:
        case KernelArgKind::sampler:
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    std::lock_guard lock(mu_);
    if (arg.kind == KernelArgKind::local)
        local_sizes_[index] = size;
    else
        std::memcpy(reinterpret_cast<unsigned char*>(storage_.data()) + offsets_[index], value, size);
    set_[index] = true;
    return ZE_RESULT_SUCCESS;
}

ze_result_t KernelState::set_group_size(uint32_t x, uint32_t y, uint32_t z) {
    const std::array<uint32_t, 3> size{x, y, z};
    uint64_t total = 1;
    for (size_t d = 0; d < 3; ++d) {
        if (size[d] == 0 || size[d] > limits_.max_group_dims[d]) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
        total *= size[d];
    }
    if (total > props_.max_group_size) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    if (props_.required_group_size[0] != 0 && size != props_.required_group_size)
        return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    std::lock_guard lock(mu_);
    group_size_ = size;
    return ZE_RESULT_SUCCESS;
}

std::array<uint32_t, 3> KernelState::group_size() const {
    std::lock_guard lock(mu_);
    return group_size_;
}

ze_result_t KernelState::set_global_offset(uint32_t x, uint32_t y, uint32_t z) {
    std::lock_guard lock(mu_);
    global_offset_ = {x, y, z};
    return ZE_RESULT_SUCCESS;
}

std::array<uint32_t, 3> KernelState::global_offset() const {
    std::lock_guard lock(mu_);
    return global_offset_;
}

ze_result_t KernelState::suggest_group_size(std::array<uint32_t, 3> global, std::array<uint32_t, 3>* out) const {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (global[0] == 0 || global[1] == 0 || global[2] == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (props_.required_group_size[0] != 0) {
        *out = props_.required_group_size;
        return ZE_RESULT_SUCCESS;
    }
    // Widest first along x (contiguous work-items), then y, then z, within what is left of
    // the total; each a divisor of its global size, so the groups tile it exactly.
    uint32_t left = props_.max_group_size;
    for (size_t d = 0; d < 3; ++d) {
        (*out)[d] = largest_divisor(global[d], std::min(left, limits_.max_group_dims[d]));
        left /= (*out)[d];
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t KernelState::snapshot(LaunchSnapshot* out) const {
    std::lock_guard lock(mu_);
    uint64_t local = props_.local_bytes;
    for (size_t i = 0; i < set_.size(); ++i) {
        if (!set_[i]) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        local += local_sizes_[i];
    }
    if (local > limits_.max_local_bytes) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    try {
        out->storage = storage_;
        out->offsets = offsets_;
        out->local_sizes = local_sizes_;
        out->values.resize(offsets_.size());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    out->group_size = group_size_;
    out->global_offset = global_offset_;
    for (size_t i = 0; i < offsets_.size(); ++i)
        out->values[i] = reinterpret_cast<const unsigned char*>(out->storage.data()) + offsets_[i];
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::hal
