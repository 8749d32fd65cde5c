// Modules and kernels of the software device: SPIR-V built by the compiler layer into host
// code (compiler::HostModule), launched as commands of an engine (SimLaunch).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "compiler/program.hpp"
#include "hal/host_event.hpp"
#include "hal/kernel_state.hpp"
#include "hal/module.hpp"
#include "hal/pointer_registry.hpp"
#include "hal/types.hpp"
#include "hal/sim/sim_engine.hpp"

namespace zehal::sim {

class SimDevice;

// The sim device's compute limits (DeviceProperties): groups of up to 1024 work-items
// (each a coroutine of the compiler's runtime when the kernel has barriers), 64 KiB of
// __local memory per group, group counts up to what ze_group_count_t holds.
inline constexpr uint32_t kMaxGroupSize = 1024;
inline constexpr uint32_t kMaxLocalBytes = 64u << 10;
inline constexpr uint32_t kMaxGroupCount = 0xFFFFFFFFu;

// The module formats and compute limits of a sim device into `props` (without the compiler:
// no format, and the reason in its limits).
void describe_kernels(hal::DeviceProperties* props);

// A SPIR-V module built for the host. Native binaries are the same SPIR-V (the sim device
// has no other code format; native_binary() gives it back). A module with imports has no
// host code until hal::link_modules builds it, with the code it imports built in and its
// imported variables bound to the exporters' storage (compiler::HostModule::link); it then
// keeps alive the exporters whose variables it uses. Thread-safe.
class SimModule final : public hal::Module, public std::enable_shared_from_this<SimModule> {
public:
    // Reads and compiles `spirv` for a device whose events are of `domain` and whose limits
    // are `limits`. UNSUPPORTED_FEATURE (reason in `log`) without the compiler,
    // MODULE_BUILD_FAILURE with the compiler's log.
    static ze_result_t create(std::shared_ptr<const hal::EventDomain> domain, const hal::KernelLimits& limits,
                              std::span<const uint8_t> spirv, std::string_view build_flags,
                              std::shared_ptr<hal::Module>* out, std::string* log);
    SimModule(std::shared_ptr<const hal::EventDomain> domain, const hal::KernelLimits& limits,
              std::vector<uint8_t> spirv, std::shared_ptr<const compiler::Program> program,
              std::shared_ptr<const compiler::HostModule> host);

    // Gives the program-scope variables back to the device that registered them, if it lives.
    ~SimModule() override;
    SimModule(const SimModule&) = delete;
    SimModule& operator=(const SimModule&) = delete;

    std::vector<std::string> kernel_names() const override;
    // INVALID_MODULE_UNLINKED while the module's imports are not linked.
    ze_result_t create_kernel(std::string_view name, std::shared_ptr<hal::Kernel>* out) override;
    std::span<const uint8_t> native_binary() const override { return spirv_; }
    // The variable's storage in the module's host code (registered with its device);
    // INVALID_MODULE_UNLINKED while the module's imports are not linked.
    ze_result_t global_pointer(std::string_view name, size_t* size, void** pointer) const override;
    bool has_imports() const override { return !program_->imports().empty(); }
    // The host code of an exported function, which kernels call through a pointer
    // (compiler::HostModule::function_address). INVALID_FUNCTION_NAME for a name that is no
    // kernel or exported function of the module; INVALID_MODULE_UNLINKED while its imports are
    // not linked; UNSUPPORTED_FEATURE for a kernel (launched, never called through a pointer)
    // and for a function that reaches a barrier (a work-item cannot suspend inside a call
    // through a pointer).
    ze_result_t function_pointer(std::string_view name, void** pointer) const override;

    // Makes every program-scope variable device memory of `device` (SimDevice::add_module_global)
    // until the module goes. Called once, by the device that built the module (a module
    // with imports registers them when it is linked).
    ze_result_t register_globals(SimDevice& device);

    // True when the module was built for the device of `domain`.
    bool belongs_to(const hal::EventDomain& domain) const noexcept { return domain_.get() == &domain; }
    const std::shared_ptr<const compiler::Program>& program() const noexcept { return program_; }
    // The module's host code; null while its imports are not linked.
    std::shared_ptr<const compiler::HostModule> host() const;

private:
    // Builds the host code of every module of `modules` whose imports are not linked, each
    // against the others (in the order their variables need: a module whose code binds the
    // variables of another not yet linked waits for it), and installs it only when all
    // were built: a link that fails changes no module.
    ze_result_t link(std::span<const hal::ModuleRef> modules, std::string* log) override;
    // Installs `host`, built by a link that took code or variables from `exporters`; the
    // variables are registered with the device. Nothing when the module was linked meanwhile.
    ze_result_t adopt(std::shared_ptr<const compiler::HostModule> host,
                      std::vector<std::shared_ptr<const SimModule>> exporters);
    // Registers the program-scope variables of `host` with the device; link_mu_ is held.
    ze_result_t register_locked(SimDevice& device, const compiler::HostModule& host);

    // The device's event domain: its identity (a module never keeps the device itself alive).
    const std::shared_ptr<const hal::EventDomain> domain_;
    const hal::KernelLimits limits_;
    const std::vector<uint8_t> spirv_;
    const std::shared_ptr<const compiler::Program> program_;
    mutable std::mutex link_mu_;  // host_, exporters_ and the registration
    std::shared_ptr<const compiler::HostModule> host_;
    std::vector<std::shared_ptr<const SimModule>> exporters_;  // whose variables the linked code uses
    std::weak_ptr<hal::Device> registered_with_;               // the device of register_globals
    std::vector<void*> registered_;                            // the variables registered there
};

// A kernel of a SimModule: the arguments and group size of KernelState, and where its code is.
class SimKernel final : public hal::KernelState {
public:
    SimKernel(std::shared_ptr<const SimModule> module, std::shared_ptr<const compiler::HostModule> host, uint32_t index,
              hal::KernelProperties props, const hal::KernelLimits& limits);

    const SimModule& module() const noexcept { return *module_; }
    // The module's host code (that of its link, for a module with imports).
    const std::shared_ptr<const compiler::HostModule>& host() const noexcept { return host_; }
    uint32_t index() const noexcept { return index_; }

private:
    const std::shared_ptr<const SimModule> module_;
    const std::shared_ptr<const compiler::HostModule> host_;
    const uint32_t index_;
};

// One launch as an engine's kernel work: the kernel's code, a snapshot of its arguments, the
// grid, and holds on the memory its pointer arguments point into (released with it, so a
// free of that memory waits for the launch, as for a copy's operands).
class SimLaunch final : public KernelWork {
public:
    SimLaunch(std::shared_ptr<const compiler::HostModule> host, uint32_t index, hal::LaunchSnapshot args,
              const hal::GroupCount& groups);
    ~SimLaunch() override;
    SimLaunch(const SimLaunch&) = delete;
    SimLaunch& operator=(const SimLaunch&) = delete;

    const hal::LaunchSnapshot& args() const noexcept { return args_; }
    // Takes over a hold of hal::PointerRegistry (null: nothing).
    void keep(hal::PointerRegistry::InFlight* held) { holds_.push_back(held); }

    ze_result_t run(std::string* error) override;
    // Runs the kernel over `groups` instead of the launch's own group count: none of its
    // work-items when a count is zero (an indirect launch's counts, read when it runs).
    ze_result_t run_over(const hal::GroupCount& groups, std::string* error);

private:
    const std::shared_ptr<const compiler::HostModule> host_;
    const uint32_t index_;
    const hal::LaunchSnapshot args_;
    compiler::LaunchGrid grid_;
    std::vector<hal::PointerRegistry::InFlight*> holds_;
};

// An indirect launch as one engine command: kernels run one after the other, each over
// the group count it reads from memory when it starts, the first *count of them when a
// count is given (hal::Queue::append_launch_indirect). The memory of the counts and of every
// kernel's pointer arguments is held until the command is over.
class SimIndirectLaunch final : public KernelWork {
public:
    SimIndirectLaunch(std::vector<std::unique_ptr<SimLaunch>> launches, const hal::GroupCount* groups,
                      const uint32_t* count);
    ~SimIndirectLaunch() override;
    SimIndirectLaunch(const SimIndirectLaunch&) = delete;
    SimIndirectLaunch& operator=(const SimIndirectLaunch&) = delete;

    // Takes over a hold of hal::PointerRegistry (null: nothing).
    void keep(hal::PointerRegistry::InFlight* held) { holds_.push_back(held); }

    ze_result_t run(std::string* error) override;

private:
    const std::vector<std::unique_ptr<SimLaunch>> launches_;
    const hal::GroupCount* const groups_;
    const uint32_t* const count_;
    std::vector<hal::PointerRegistry::InFlight*> holds_;
};

}  // namespace zehal::sim
