// Modules and kernels: code built for a device from SPIR-V (or the backend's native
// format), kernels by name with their arguments and group size (contract §12).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "zehal/ze_result.h"

namespace zehal::hal {

// Binary formats of Device::create_module (Level Zero's ze_module_format_t values).
enum class ModuleFormat : uint32_t {
    spirv = 0,   // ZE_MODULE_FORMAT_IL_SPIRV: on every device with the compiler
    native = 1,  // ZE_MODULE_FORMAT_NATIVE: the backend's own (CUDA: PTX or cubin)
};

// How a kernel argument is passed (OpenCL address spaces of pointer arguments).
enum class KernelArgKind : uint32_t { value = 0, global = 1, constant = 2, local = 3, image = 4, sampler = 5 };

// One argument of a kernel signature.
struct KernelArg {
    KernelArgKind kind = KernelArgKind::value;
    uint32_t size = 0;  // bytes set_argument takes (pointers 8; local: any, it is the byte count)
};

// A kernel's signature and attributes.
struct KernelProperties {
    std::string name;
    std::vector<KernelArg> args;
    std::array<uint32_t, 3> required_group_size{};  // zeros when the kernel declares none
    uint32_t private_bytes = 0;                     // private memory per work-item
    uint32_t local_bytes = 0;                       // static local memory per group
    uint32_t max_group_size = 0;                    // largest group this kernel may launch with
    // OpenCL C attributes of the kernel's source, space-separated ("reqd_work_group_size(8,4,1)
    // work_group_size_hint(1,1,1)"); "" when none or not known (native modules).
    std::string source_attributes;
};

// Group counts of a launch (ze_group_count_t), every value >= 1.
using GroupCount = std::array<uint32_t, 3>;

// A kernel of a module: its arguments and group size are state of this object (as in
// Level Zero), captured by each launch. Thread-safe; a launch takes a snapshot, so later
// set_argument calls do not change launches already appended.
class Kernel {
public:
    virtual ~Kernel() = default;

    // Signature and attributes.
    virtual const KernelProperties& properties() const = 0;
    // Sets argument `index` from `size` bytes at `value` (pointer arguments: the address,
    // or null `value` for a null pointer; local arguments: `size` is the byte count and
    // `value` must be null). INVALID_KERNEL_ARGUMENT_INDEX past the last argument,
    // INVALID_KERNEL_ARGUMENT_SIZE for a size the signature does not take.
    virtual ze_result_t set_argument(uint32_t index, size_t size, const void* value) = 0;
    // Sets the group size; INVALID_GROUP_SIZE_DIMENSION for 0, over the device's maximum
    // (per dimension or in total), or not the kernel's required_group_size.
    virtual ze_result_t set_group_size(uint32_t x, uint32_t y, uint32_t z) = 0;
    // The group size launches use (the required one, or 1,1,1 until set).
    virtual std::array<uint32_t, 3> group_size() const = 0;
    // Sets the global offset (ZE_experimental_global_offset) of later launches:
    // get_global_offset(d) returns it and get_global_id(d) includes it. Any values are
    // taken (OpenCL's limit is the wrap of size_t). UNSUPPORTED_FEATURE where the kernel's
    // code cannot receive one (a native CUDA module: zero is taken, as it changes nothing).
    virtual ze_result_t set_global_offset(uint32_t x, uint32_t y, uint32_t z) {
        return x == 0 && y == 0 && z == 0 ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    // The global offset launches use (0,0,0 until set).
    virtual std::array<uint32_t, 3> global_offset() const { return {0, 0, 0}; }
    // A group size for `global` work-items per dimension: each divides its global size,
    // their product within the device's maximum. INVALID_ARGUMENT for a zero size.
    virtual ze_result_t suggest_group_size(std::array<uint32_t, 3> global, std::array<uint32_t, 3>* out) const = 0;
};

// Code built for one device; kernels are created from it by name. Thread-safe; kernels
// keep their module alive.
class Module {
public:
    virtual ~Module() = default;

    // Kernel names in the order the binary declares them.
    virtual std::vector<std::string> kernel_names() const = 0;
    // A new kernel object for `name`; INVALID_KERNEL_NAME when the module has none.
    virtual ze_result_t create_kernel(std::string_view name, std::shared_ptr<Kernel>* out) = 0;
    // The device-specific binary the module was built into (PTX on CUDA, the SPIR-V on
    // sim, where the code is JIT-compiled in memory); what create_module takes back as
    // ModuleFormat::native where the backend accepts it.
    virtual std::span<const uint8_t> native_binary() const = 0;
    // The program-scope variable `name` (OpenCL C `global` or `constant` at file scope) as
    // device memory: its address, which copies, fills and kernels of the module's device
    // take for as long as the module lives, and its size in bytes (either output may be
    // null). INVALID_GLOBAL_NAME when the module exports no variable of that name;
    // UNSUPPORTED_FEATURE where the backend cannot give one.
    virtual ze_result_t global_pointer(std::string_view name, size_t* size, void** pointer) const {
        static_cast<void>(name);
        static_cast<void>(size);
        static_cast<void>(pointer);
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    // The address of function `name` of the module (a kernel, or a function the module
    // exports) as the device's code calls it. INVALID_FUNCTION_NAME when the module has no
    // such function; UNSUPPORTED_FEATURE where the backend cannot give one.
    virtual ze_result_t function_pointer(std::string_view name, void** pointer) const {
        static_cast<void>(name);
        static_cast<void>(pointer);
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    // True when the module imports functions or variables (SPIR-V Import linkage): kernels
    // are created from it once link_modules resolved its imports.
    virtual bool has_imports() const { return false; }

private:
    friend ze_result_t link_modules(std::span<const std::shared_ptr<Module>> modules, std::string* log);
    // link_modules' hook, called on one module of the list with the whole list (no null, no
    // module twice). This default is a backend without linking: nothing to do when no
    // module imports anything, else UNSUPPORTED_FEATURE.
    virtual ze_result_t link(std::span<const std::shared_ptr<Module>> modules, std::string* log);
};

using ModuleRef = std::shared_ptr<Module>;
using KernelRef = std::shared_ptr<Kernel>;

// Resolves the imports of every module of `modules` (one device's) against the exports of
// the others (zeModuleDynamicLink): kernels can then be created from them, and they call the
// functions and use the variables of the modules they import from (destroying those first
// is safe: an importer keeps what it needs of them).
// A module is linked once: one already linked keeps its imports and may still export to
// others. A module listed twice counts once; an empty list links nothing.
// MODULE_LINK_FAILURE with the names in `log` (may be null) when an import is exported by
// no other module of the list, or by several; INVALID_NULL_HANDLE for a null module;
// UNSUPPORTED_FEATURE where the backend cannot link (reason in `log`).
ze_result_t link_modules(std::span<const ModuleRef> modules, std::string* log);

}  // namespace zehal::hal
