// The objects behind module, build log and kernel handles. A kernel handle keeps, beside
// its HAL kernel, the arguments, group size and global offset as the application set them, so a regular
// command list can record a launch with the state of its append (Level Zero captures a
// kernel's arguments when a launch is appended, not when the list is executed).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "objects.hpp"
#include "hal/module.hpp"

namespace zehal::ze_driver {

// A module built for one device.
struct ModuleObject {
    hal::ModuleRef module;
    DeviceObject* device;
    std::once_flag names_once;       // zeModuleGetKernelNames fills `names` once
    std::vector<std::string> names;  // what the C strings it hands out point into
};

// The text of a module build's log (empty when the build said nothing).
struct BuildLogObject {
    std::string text;
};

// A kernel of a module. Every method is thread-safe.
class KernelObject {
public:
    KernelObject(std::shared_ptr<ModuleObject> module, hal::KernelRef kernel);

    const ModuleObject& module() const { return *module_; }
    const hal::KernelProperties& properties() const { return kernel_->properties(); }

    // Sets argument `index` on the HAL kernel (its checks and errors) and remembers it. A
    // by-value argument given more bytes than its size takes its first bytes, given fewer
    // takes them as its low bytes with zeros above (both as Intel's driver does).
    ze_result_t set_argument(uint32_t index, size_t size, const void* value);
    // Sets the group size on the HAL kernel (its checks and errors) and remembers it.
    ze_result_t set_group_size(uint32_t x, uint32_t y, uint32_t z);
    // Sets the global offset on the HAL kernel (its errors) and remembers it.
    ze_result_t set_global_offset(uint32_t x, uint32_t y, uint32_t z);
    // The HAL kernel's suggestion for `global` work-items.
    ze_result_t suggest_group_size(std::array<uint32_t, 3> global, std::array<uint32_t, 3>* out) const;
    // The group size launches use now.
    std::array<uint32_t, 3> group_size() const { return kernel_->group_size(); }

    // Indirect-access flags (ze_kernel_indirect_access_flags_t): accepted and reported back;
    // zehal's devices reach every allocation of the context from every kernel anyway.
    void set_indirect_access(uint32_t flags);
    uint32_t indirect_access() const;

    // The kernel to launch now: INVALID_ARGUMENT while an argument is unset. With `copy`
    // false it is this object's HAL kernel (the HAL snapshots it and checks its pointer
    // arguments when the launch is queued: immediate lists); with `copy` true it is a new
    // HAL kernel of the module carrying the current arguments, group size and global offset, which later
    // calls on this object do not change (regular lists, whose launches are queued at
    // execution), its arguments checked now as a queue checks a launch's
    // (hal::check_launch_arguments against the device), so that an execution finds its
    // operands valid.
    ze_result_t launchable(bool copy, hal::KernelRef* out) const;

private:
    // An argument as last set: its size and bytes (no bytes: a null pointer, or a local
    // argument's byte count in `size`).
    struct Argument {
        bool set = false;
        size_t size = 0;
        std::vector<uint8_t> bytes;
    };

    const std::shared_ptr<ModuleObject> module_;  // kept alive: the kernel's code is its
    const hal::KernelRef kernel_;
    mutable std::mutex mu_;  // orders HAL calls with the copy of the state beside them
    std::vector<Argument> args_;
    std::array<uint32_t, 3> group_size_{};     // zeros until set
    std::array<uint32_t, 3> global_offset_{};  // zeros until set
    uint32_t indirect_access_ = 0;
};

// Live module, build log and kernel handles (the tables of objects.hpp, one numbering).
HandleTable<ModuleObject>& modules();
HandleTable<BuildLogObject>& build_logs();
HandleTable<KernelObject>& kernels();

}  // namespace zehal::ze_driver
