#include "kernel_object.hpp"

#include <cstring>

#include "hal/queue_checks.hpp"

namespace zehal::ze_driver {

KernelObject::KernelObject(std::shared_ptr<ModuleObject> module, hal::KernelRef kernel)
    : module_(std::move(module)),
      kernel_(std::move(kernel)),
      args_(kernel_->properties().args.size()) {}

ze_result_t KernelObject::set_argument(uint32_t index, size_t size, const void* value) {
    // A by-value argument given with more bytes than it has (a size_t for an int) takes its
    // first bytes, the low ones on little-endian hosts; given fewer (a uint32_t for a
    // size_t), it takes them as its low bytes and zeros above: both as Intel's driver does.
    const std::vector<hal::KernelArg>& signature = kernel_->properties().args;
    std::vector<uint8_t> widened;
    if (value && size > 0 && index < signature.size() && signature[index].kind == hal::KernelArgKind::value &&
        signature[index].size > 0) {
        if (size < signature[index].size) {
            widened.assign(signature[index].size, 0);
            std::memcpy(widened.data(), value, size);
            value = widened.data();
        }
        size = signature[index].size;
    }
    std::lock_guard lock(mu_);
    if (ze_result_t r = kernel_->set_argument(index, size, value); r != ZE_RESULT_SUCCESS) return r;
    Argument& a = args_[index];  // the HAL kernel refused any index past its signature
    a.set = true;
    a.size = size;
    const auto* bytes = static_cast<const uint8_t*>(value);
    if (bytes)
        a.bytes.assign(bytes, bytes + size);
    else
        a.bytes.clear();
    return ZE_RESULT_SUCCESS;
}

ze_result_t KernelObject::set_group_size(uint32_t x, uint32_t y, uint32_t z) {
    std::lock_guard lock(mu_);
    if (ze_result_t r = kernel_->set_group_size(x, y, z); r != ZE_RESULT_SUCCESS) return r;
    group_size_ = {x, y, z};
    return ZE_RESULT_SUCCESS;
}

ze_result_t KernelObject::set_global_offset(uint32_t x, uint32_t y, uint32_t z) {
    std::lock_guard lock(mu_);
    if (ze_result_t r = kernel_->set_global_offset(x, y, z); r != ZE_RESULT_SUCCESS) return r;
    global_offset_ = {x, y, z};
    return ZE_RESULT_SUCCESS;
}

ze_result_t KernelObject::suggest_group_size(std::array<uint32_t, 3> global, std::array<uint32_t, 3>* out) const {
    return kernel_->suggest_group_size(global, out);
}

void KernelObject::set_indirect_access(uint32_t flags) {
    std::lock_guard lock(mu_);
    indirect_access_ = flags;
}

uint32_t KernelObject::indirect_access() const {
    std::lock_guard lock(mu_);
    return indirect_access_;
}

ze_result_t KernelObject::launchable(bool copy, hal::KernelRef* out) const {
    std::lock_guard lock(mu_);
    for (const Argument& a : args_)
        if (!a.set) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!copy) {
        *out = kernel_;
        return ZE_RESULT_SUCCESS;
    }
    hal::KernelRef k;
    if (ze_result_t r = module_->module->create_kernel(kernel_->properties().name, &k); r != ZE_RESULT_SUCCESS)
        return r;
    for (size_t i = 0; i < args_.size(); ++i) {
        const Argument& a = args_[i];
        if (ze_result_t r = k->set_argument(static_cast<uint32_t>(i), a.size,
                                            a.bytes.empty() ? nullptr : a.bytes.data());
            r != ZE_RESULT_SUCCESS)
            return r;
    }
    if (group_size_[0] != 0)
        if (ze_result_t r = k->set_group_size(group_size_[0], group_size_[1], group_size_[2]); r != ZE_RESULT_SUCCESS)
            return r;
    if (ze_result_t r = k->set_global_offset(global_offset_[0], global_offset_[1], global_offset_[2]);
        r != ZE_RESULT_SUCCESS)
        return r;
    // Its pointer arguments as a queue checks them when the launch is queued, now, against the
    // device (Device::check_operand): an execution then finds its operands valid.
    hal::DeviceTarget target(*module_->device->device);
    hal::PlacedLaunch placed;
    if (ze_result_t r = hal::check_launch_arguments(target, *k, &placed); r != ZE_RESULT_SUCCESS) return r;
    *out = std::move(k);
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::ze_driver
