// Modules and kernels of the level_zero backend: the driver's own, passed through.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/level_zero/level_zero_device.hpp"
#include "hal/module.hpp"

namespace zehal::level_zero {

// Reads the driver's compute limits (zeDeviceGetComputeProperties) and floating-point
// atomics (zeDeviceGetModuleProperties' ze_float_atomic_ext_properties_t, none where it
// does not answer) into `props`; the module formats are both of Level Zero's. Leaves the
// limits at zero (kernels then cannot launch) when the driver does not answer.
void describe_compute(const ZeApi& api, ze_device_handle_t device, hal::DeviceProperties* props);

// A ze_module_handle_t of the device's context. Its kernel names and native binary are read
// once, when it is built. Thread-safe.
class ZeModule final : public hal::Module, public std::enable_shared_from_this<ZeModule> {
public:
    // zeModuleCreate of `binary`; MODULE_BUILD_FAILURE (and others) with the driver's build
    // log in `log`.
    static ze_result_t create(const std::shared_ptr<ZeDevice>& device, hal::ModuleFormat format,
                              std::span<const uint8_t> binary, std::string_view build_flags,
                              std::shared_ptr<hal::Module>* out, std::string* log);
    ZeModule(std::shared_ptr<ZeDevice> device, ze_module_handle_t handle);
    ~ZeModule() override;

    std::vector<std::string> kernel_names() const override { return names_; }
    ze_result_t create_kernel(std::string_view name, std::shared_ptr<hal::Kernel>* out) override;
    std::span<const uint8_t> native_binary() const override { return native_; }
    // The driver's zeModuleGetGlobalPointer, zeModuleGetFunctionPointer and module
    // properties (ZE_MODULE_PROPERTY_FLAG_IMPORTS, read once, when the module is built).
    ze_result_t global_pointer(std::string_view name, size_t* size, void** pointer) const override;
    ze_result_t function_pointer(std::string_view name, void** pointer) const override;
    bool has_imports() const override { return imports_; }

    const std::shared_ptr<ZeDevice>& device() const noexcept { return device_; }

private:
    // The driver's zeModuleDynamicLink of the modules' handles (every one a ZeModule of this
    // device, else MODULE_LINK_FAILURE), its link log into `log`.
    ze_result_t link(std::span<const hal::ModuleRef> modules, std::string* log) override;
    // Kernel names, native binary and properties from the driver.
    ze_result_t describe();

    const std::shared_ptr<ZeDevice> device_;
    const ze_module_handle_t handle_;
    std::vector<std::string> names_;
    std::vector<uint8_t> native_;
    bool imports_ = false;
};

// A ze_kernel_handle_t: arguments and group size are the driver's state, set through it.
// The driver does not say how each argument is passed: properties().args holds one
// KernelArg of kind value and size 0 per argument, and the driver checks what is set.
// Level Zero kernels are not thread-safe: every call and each launch (which reads the
// arguments) hold the kernel's lock.
class ZeKernel final : public hal::Kernel {
public:
    ZeKernel(std::shared_ptr<ZeModule> module, ze_kernel_handle_t handle, hal::KernelProperties props);
    ~ZeKernel() override;

    const hal::KernelProperties& properties() const override { return props_; }
    ze_result_t set_argument(uint32_t index, size_t size, const void* value) override;
    ze_result_t set_group_size(uint32_t x, uint32_t y, uint32_t z) override;
    std::array<uint32_t, 3> group_size() const override;
    // The driver's zeKernelSetGlobalOffsetExp (UNSUPPORTED_FEATURE where the loader lacks it).
    ze_result_t set_global_offset(uint32_t x, uint32_t y, uint32_t z) override;
    std::array<uint32_t, 3> global_offset() const override;
    ze_result_t suggest_group_size(std::array<uint32_t, 3> global, std::array<uint32_t, 3>* out) const override;

    // The device the kernel belongs to.
    const ZeDevice& device() const noexcept { return *module_->device(); }
    // Appends the launch of this kernel to `list` under the kernel's lock, so that no
    // argument changes while the driver captures them.
    ze_result_t append_launch(ze_command_list_handle_t list, const ze_group_count_t& groups, ze_event_handle_t signal,
                              std::span<ze_event_handle_t> waits);
    // Appends the indirect launch of `kernels` (ZeKernels of one device) to `list`, with
    // the driver's indirect launch of one kernel when `count` is null, else of several,
    // under every kernel's lock (taken in address order, once per kernel).
    static ze_result_t append_launch_indirect(ze_command_list_handle_t list, std::span<const hal::KernelRef> kernels,
                                              const ze_group_count_t* groups, const uint32_t* count,
                                              ze_event_handle_t signal, std::span<ze_event_handle_t> waits);

private:
    const std::shared_ptr<ZeModule> module_;
    const ze_kernel_handle_t handle_;
    const hal::KernelProperties props_;
    mutable std::mutex mu_;  // the driver's kernel, group_size_ and global_offset_
    std::array<uint32_t, 3> group_size_{1, 1, 1};
    std::array<uint32_t, 3> global_offset_{0, 0, 0};
};

}  // namespace zehal::level_zero
