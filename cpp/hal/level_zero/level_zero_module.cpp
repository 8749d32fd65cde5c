// Modules, kernels and launches of the level_zero backend: ZeDevice::do_create_module,
// ZeModule, ZeKernel and ZeQueue's launch hook.
#include "hal/level_zero/level_zero_module.hpp"

#include <algorithm>
#include <mutex>
#include <new>
#include <utility>

#include "hal/level_zero/level_zero_event.hpp"
#include "hal/level_zero/level_zero_queue.hpp"

namespace zehal::level_zero {

namespace {

// The driver's build log of `log` into *out (when both are given), then destroyed.
void take_build_log(const ZeApi& api, ze_module_build_log_handle_t log, std::string* out) {
    if (!log) return;
    size_t size = 0;
    if (out && api.zeModuleBuildLogGetString(log, &size, nullptr) == ZE_RESULT_SUCCESS && size > 0) {
        std::string text(size, '\0');
        if (api.zeModuleBuildLogGetString(log, &size, text.data()) == ZE_RESULT_SUCCESS) {
            text.resize(text.find('\0') == std::string::npos ? text.size() : text.find('\0'));
            *out = std::move(text);
        }
    }
    api.zeModuleBuildLogDestroy(log);
}

}  // namespace

void describe_compute(const ZeApi& api, ze_device_handle_t device, hal::DeviceProperties* props) {
    props->module_formats = (1u << static_cast<uint32_t>(hal::ModuleFormat::spirv)) |
                            (1u << static_cast<uint32_t>(hal::ModuleFormat::native));
    ze_float_atomic_ext_properties_t atomics{};
    atomics.stype = ZE_STRUCTURE_TYPE_FLOAT_ATOMIC_EXT_PROPERTIES;
    ze_device_module_properties_t m{};
    m.stype = ZE_STRUCTURE_TYPE_DEVICE_MODULE_PROPERTIES;
    m.pNext = &atomics;
    if (api.zeDeviceGetModuleProperties(device, &m) == ZE_RESULT_SUCCESS) {
        props->fp16_atomics = atomics.fp16Flags;
        props->fp32_atomics = atomics.fp32Flags;
        props->fp64_atomics = atomics.fp64Flags;
    }
    ze_device_compute_properties_t c{};
    c.stype = ZE_STRUCTURE_TYPE_DEVICE_COMPUTE_PROPERTIES;
    if (api.zeDeviceGetComputeProperties(device, &c) != ZE_RESULT_SUCCESS) return;
    props->max_group_size = c.maxTotalGroupSize;
    props->max_group_dims = {c.maxGroupSizeX, c.maxGroupSizeY, c.maxGroupSizeZ};
    props->max_group_count = {c.maxGroupCountX, c.maxGroupCountY, c.maxGroupCountZ};
    props->max_local_bytes = c.maxSharedLocalMemory;
}

ze_result_t ZeDevice::do_create_module(hal::ModuleFormat format, std::span<const uint8_t> binary,
                                       std::string_view build_flags, std::shared_ptr<hal::Module>* out,
                                       std::string* log) {
    return ZeModule::create(std::static_pointer_cast<ZeDevice>(shared_from_this()), format, binary, build_flags, out,
                            log);
}

// ---------------------------------------------------------------- ZeModule

ze_result_t ZeModule::create(const std::shared_ptr<ZeDevice>& device, hal::ModuleFormat format,
                             std::span<const uint8_t> binary, std::string_view build_flags,
                             std::shared_ptr<hal::Module>* out, std::string* log) {
    const ZeApi& api = device->api();
    const std::string flags(build_flags);
    ze_module_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_MODULE_DESC;
    desc.format = format == hal::ModuleFormat::spirv ? ZE_MODULE_FORMAT_IL_SPIRV : ZE_MODULE_FORMAT_NATIVE;
    desc.inputSize = binary.size();
    desc.pInputModule = binary.data();
    desc.pBuildFlags = flags.c_str();
    ze_module_handle_t handle = nullptr;
    ze_module_build_log_handle_t build_log = nullptr;
    const ze_result_t r = api.zeModuleCreate(device->driver().context, device->handle(), &desc, &handle, &build_log);
    take_build_log(api, build_log, log);
    if (r != ZE_RESULT_SUCCESS) return device->check(r);
    std::shared_ptr<ZeModule> module;
    try {
        module = std::make_shared<ZeModule>(device, handle);
    } catch (const std::bad_alloc&) {
        api.zeModuleDestroy(handle);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (ze_result_t d = module->describe(); d != ZE_RESULT_SUCCESS) return device->check(d);
    *out = std::move(module);
    return ZE_RESULT_SUCCESS;
}

ZeModule::ZeModule(std::shared_ptr<ZeDevice> device, ze_module_handle_t handle)
    : device_(std::move(device)),
      handle_(handle) {}

ZeModule::~ZeModule() { device_->api().zeModuleDestroy(handle_); }

ze_result_t ZeModule::describe() {
    const ZeApi& api = device_->api();
    uint32_t count = 0;
    if (ze_result_t r = api.zeModuleGetKernelNames(handle_, &count, nullptr); r != ZE_RESULT_SUCCESS) return r;
    std::vector<const char*> names(count);
    if (ze_result_t r = api.zeModuleGetKernelNames(handle_, &count, names.data()); r != ZE_RESULT_SUCCESS) return r;
    names_.assign(names.begin(), names.begin() + count);
    size_t size = 0;
    if (ze_result_t r = api.zeModuleGetNativeBinary(handle_, &size, nullptr); r != ZE_RESULT_SUCCESS) return r;
    native_.resize(size);
    if (size > 0)
        if (ze_result_t r = api.zeModuleGetNativeBinary(handle_, &size, native_.data()); r != ZE_RESULT_SUCCESS)
            return r;
    ze_module_properties_t props{};
    props.stype = ZE_STRUCTURE_TYPE_MODULE_PROPERTIES;
    if (ze_result_t r = api.zeModuleGetProperties(handle_, &props); r != ZE_RESULT_SUCCESS) return r;
    imports_ = (props.flags & ZE_MODULE_PROPERTY_FLAG_IMPORTS) != 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZeModule::global_pointer(std::string_view name, size_t* size, void** pointer) const {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    const std::string global(name);
    return device_->check(device_->api().zeModuleGetGlobalPointer(handle_, global.c_str(), size, pointer));
}

ze_result_t ZeModule::function_pointer(std::string_view name, void** pointer) const {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!pointer) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const std::string function(name);
    return device_->check(device_->api().zeModuleGetFunctionPointer(handle_, function.c_str(), pointer));
}

ze_result_t ZeModule::link(std::span<const hal::ModuleRef> modules, std::string* log) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    std::vector<ze_module_handle_t> handles;
    try {
        handles.reserve(modules.size());
        for (const hal::ModuleRef& m : modules) {
            const auto* z = dynamic_cast<const ZeModule*>(m.get());
            if (!z || z->device_ != device_) {
                *log = "zehal: the modules of a link must be of one device";
                return ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
            }
            handles.push_back(z->handle_);
        }
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    const ZeApi& api = device_->api();
    ze_module_build_log_handle_t link_log = nullptr;
    const ze_result_t r = api.zeModuleDynamicLink(static_cast<uint32_t>(handles.size()), handles.data(), &link_log);
    take_build_log(api, link_log, log);
    return device_->check(r);
}

ze_result_t ZeModule::create_kernel(std::string_view name, std::shared_ptr<hal::Kernel>* out) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const ZeApi& api = device_->api();
    const std::string kernel_name(name);
    ze_kernel_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC;
    desc.pKernelName = kernel_name.c_str();
    ze_kernel_handle_t handle = nullptr;
    if (ze_result_t r = api.zeKernelCreate(handle_, &desc, &handle); r != ZE_RESULT_SUCCESS) return device_->check(r);
    ze_kernel_properties_t kp{};
    kp.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES;
    if (ze_result_t r = api.zeKernelGetProperties(handle, &kp); r != ZE_RESULT_SUCCESS) {
        api.zeKernelDestroy(handle);
        return device_->check(r);
    }
    try {
        hal::KernelProperties props;
        props.name = kernel_name;
        props.args.assign(kp.numKernelArgs, hal::KernelArg{});
        props.required_group_size = {kp.requiredGroupSizeX, kp.requiredGroupSizeY, kp.requiredGroupSizeZ};
        props.private_bytes = kp.privateMemSize;
        props.local_bytes = kp.localMemSize;
        props.max_group_size = device_->properties().max_group_size;
        // The driver's attribute string (size, then the text into an array *pString points to).
        uint32_t size = 0;
        if (api.zeKernelGetSourceAttributes(handle, &size, nullptr) == ZE_RESULT_SUCCESS && size > 1) {
            std::string text(size, '\0');
            char* at = text.data();
            if (api.zeKernelGetSourceAttributes(handle, &size, &at) == ZE_RESULT_SUCCESS)
                props.source_attributes.assign(text.c_str());
        }
        *out = std::make_shared<ZeKernel>(shared_from_this(), handle, std::move(props));
    } catch (const std::bad_alloc&) {
        api.zeKernelDestroy(handle);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

// ---------------------------------------------------------------- ZeKernel

ZeKernel::ZeKernel(std::shared_ptr<ZeModule> module, ze_kernel_handle_t handle, hal::KernelProperties props)
    : module_(std::move(module)),
      handle_(handle),
      props_(std::move(props)) {
    if (props_.required_group_size[0] != 0) group_size_ = props_.required_group_size;
}

ZeKernel::~ZeKernel() { module_->device()->api().zeKernelDestroy(handle_); }

ze_result_t ZeKernel::set_argument(uint32_t index, size_t size, const void* value) {
    std::lock_guard lock(mu_);
    return module_->device()->api().zeKernelSetArgumentValue(handle_, index, size, value);
}

ze_result_t ZeKernel::set_group_size(uint32_t x, uint32_t y, uint32_t z) {
    std::lock_guard lock(mu_);
    const ze_result_t r = module_->device()->api().zeKernelSetGroupSize(handle_, x, y, z);
    if (r == ZE_RESULT_SUCCESS) group_size_ = {x, y, z};
    return r;
}

std::array<uint32_t, 3> ZeKernel::group_size() const {
    std::lock_guard lock(mu_);
    return group_size_;
}

ze_result_t ZeKernel::set_global_offset(uint32_t x, uint32_t y, uint32_t z) {
    const ZeApi& api = module_->device()->api();
    if (!api.zeKernelSetGlobalOffsetExp) return hal::Kernel::set_global_offset(x, y, z);
    std::lock_guard lock(mu_);
    const ze_result_t r = api.zeKernelSetGlobalOffsetExp(handle_, x, y, z);
    if (r == ZE_RESULT_SUCCESS) global_offset_ = {x, y, z};
    return r;
}

std::array<uint32_t, 3> ZeKernel::global_offset() const {
    std::lock_guard lock(mu_);
    return global_offset_;
}

ze_result_t ZeKernel::suggest_group_size(std::array<uint32_t, 3> global, std::array<uint32_t, 3>* out) const {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    // The HAL's rule (hal/module.hpp); drivers answer a zero size with a code of their own.
    if (global[0] == 0 || global[1] == 0 || global[2] == 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::lock_guard lock(mu_);
    return module_->device()->api().zeKernelSuggestGroupSize(handle_, global[0], global[1], global[2], &(*out)[0],
                                                             &(*out)[1], &(*out)[2]);
}

ze_result_t ZeKernel::append_launch(ze_command_list_handle_t list, const ze_group_count_t& groups,
                                    ze_event_handle_t signal, std::span<ze_event_handle_t> waits) {
    std::lock_guard lock(mu_);
    return module_->device()->api().zeCommandListAppendLaunchKernel(list, handle_, &groups, signal,
                                                                    static_cast<uint32_t>(waits.size()), waits.data());
}

ze_result_t ZeKernel::append_launch_indirect(ze_command_list_handle_t list, std::span<const hal::KernelRef> kernels,
                                             const ze_group_count_t* groups, const uint32_t* count,
                                             ze_event_handle_t signal, std::span<ze_event_handle_t> waits) {
    std::vector<ZeKernel*> locked;
    std::vector<ze_kernel_handle_t> handles;
    std::vector<std::unique_lock<std::mutex>> locks;
    try {
        for (const hal::KernelRef& k : kernels) {
            locked.push_back(static_cast<ZeKernel*>(k.get()));
            handles.push_back(locked.back()->handle_);
        }
        std::sort(locked.begin(), locked.end());
        locked.erase(std::unique(locked.begin(), locked.end()), locked.end());
        locks.reserve(locked.size());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (ZeKernel* k : locked) locks.emplace_back(k->mu_);
    const ZeApi& api = static_cast<ZeKernel&>(*kernels[0]).module_->device()->api();
    const auto wait_count = static_cast<uint32_t>(waits.size());
    if (!count)
        return api.zeCommandListAppendLaunchKernelIndirect(list, handles[0], groups, signal, wait_count, waits.data());
    return api.zeCommandListAppendLaunchMultipleKernelsIndirect(
        list, static_cast<uint32_t>(handles.size()), handles.data(), count, groups, signal, wait_count, waits.data());
}

// ---------------------------------------------------------------- ZeQueue

bool ZeQueue::owns_kernel(const hal::Kernel& kernel) const noexcept {
    const auto* k = dynamic_cast<const ZeKernel*>(&kernel);
    return k && &k->device() == device_.get();
}

ze_result_t ZeQueue::do_append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, hal::PlacedLaunch&,
                                      const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    Events events;
    if (ze_result_t r = events_of(signal, waits, &events); r != ZE_RESULT_SUCCESS) return r;
    const ze_group_count_t count{groups[0], groups[1], groups[2]};
    std::lock_guard lock(mu_);
    ++submitted_;
    return device_->check(static_cast<ZeKernel&>(kernel).append_launch(list_, count, events.signal, events.waits));
}

ze_result_t ZeQueue::do_append_launch_indirect(std::span<const hal::KernelRef> kernels, const hal::GroupCount* groups,
                                               const uint32_t* count, hal::PlacedIndirectLaunch&,
                                               const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    Events events;
    if (ze_result_t r = events_of(signal, waits, &events); r != ZE_RESULT_SUCCESS) return r;
    static_assert(sizeof(hal::GroupCount) == sizeof(ze_group_count_t), "three uint32_t, as the driver reads them");
    const auto* counts = reinterpret_cast<const ze_group_count_t*>(groups);
    std::lock_guard lock(mu_);
    ++submitted_;
    return device_->check(ZeKernel::append_launch_indirect(list_, kernels, counts, count, events.signal, events.waits));
}

}  // namespace zehal::level_zero
