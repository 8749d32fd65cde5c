// A module of several programs (Level Zero's ze_module_program_exp_desc_t): modules of one
// device, linked to each other when it is made, seen as one module.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/module.hpp"

namespace zehal::hal {

// One module over `parts` (modules of one device, each built on its own): its kernels are
// theirs, in the order of the parts, and so are its variables and functions (the first part
// that has the name). Thread-safe.
class ProgramModule final : public Module {
public:
    // Links `parts` to each other (link_modules: each part's imports resolved by the exports
    // of the others) and makes the module of them. MODULE_LINK_FAILURE with the names in
    // `log` when an import is exported by no part, or by several; INVALID_ARGUMENT for no
    // part; UNSUPPORTED_FEATURE where the backend cannot link (reason in `log`).
    static ze_result_t create(std::vector<ModuleRef> parts, ModuleRef* out, std::string* log);
    explicit ProgramModule(std::vector<ModuleRef> parts) : parts_(std::move(parts)) {}

    // The modules it is made of, in order.
    std::span<const ModuleRef> parts() const noexcept { return parts_; }

    std::vector<std::string> kernel_names() const override;
    // The kernel of the first part that has one named `name`.
    ze_result_t create_kernel(std::string_view name, std::shared_ptr<Kernel>* out) override;
    // None: the programs have a binary each, and no one of them makes the module.
    std::span<const uint8_t> native_binary() const override { return {}; }
    ze_result_t global_pointer(std::string_view name, size_t* size, void** pointer) const override;
    ze_result_t function_pointer(std::string_view name, void** pointer) const override;
    // True when a part imports (its imports are resolved from the start).
    bool has_imports() const override;

private:
    const std::vector<ModuleRef> parts_;
};

}  // namespace zehal::hal
