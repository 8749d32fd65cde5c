// Kernels from SPIR-V: a verified program, its kernels' signatures, and the two targets
// the backends need (host code for the sim device, PTX for CUDA). The interface between
// the compiler layer and the backends; no backend type appears here.
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

namespace zehal::compiler {

// True when zehal was built with LLVM 15, the SPIRV-LLVM-Translator and libclc; else
// every build answers UNSUPPORTED_FEATURE and unavailable_reason() says why.
bool available() noexcept;
// Why kernels cannot be built ("" when available()).
std::string_view unavailable_reason() noexcept;

// How a kernel reads one argument (OpenCL address spaces of pointer arguments).
enum class ArgKind : uint32_t {
    value = 0,     // bytes passed by value (scalars, vectors, structs)
    global = 1,    // __global pointer: 8 bytes, a device-usable address or null
    constant = 2,  // __constant pointer: as global, read only
    local = 3,     // __local pointer: the launch gives the byte count, not the bytes
    image = 4,     // images and samplers: not supported by any target here
    sampler = 5,
};

// One argument of a kernel signature.
struct ArgInfo {
    ArgKind kind = ArgKind::value;
    uint32_t size = 0;  // bytes the caller sets (pointers 8; local: 0, its size is given)
};

// A kernel's signature and attributes, read from the SPIR-V.
struct KernelInfo {
    std::string name;
    std::vector<ArgInfo> args;
    std::array<uint32_t, 3> required_group_size{};  // reqd_work_group_size; zeros when none
    uint32_t private_bytes = 0;                     // private memory per work-item (estimate)
    uint32_t local_bytes = 0;                       // static __local memory per group
    // Its OpenCL C attributes as the source wrote them, space-separated (e.g.
    // "reqd_work_group_size(8,4,1) vec_type_hint(float4)"); "" when none.
    std::string attributes;
};

// A program-scope variable (OpenCL C `global` or `constant` at file scope) that the module
// exports, which the host reaches by name (zeModuleGetGlobalPointer).
struct GlobalInfo {
    std::string name;
    uint64_t size = 0;      // bytes
    bool constant = false;  // __constant: read-only to kernels, which may use its initial value
};

// The shape of a launch: group counts and sizes per dimension, every value >= 1.
struct LaunchGrid {
    std::array<uint32_t, 3> group_count{1, 1, 1};
    std::array<uint32_t, 3> group_size{1, 1, 1};
    std::array<uint32_t, 3> global_offset{0, 0, 0};
};

// A SPIR-V binary read into LLVM IR and checked: immutable, shareable between threads.
class Program {
public:
    virtual ~Program() = default;

    // Reads `spirv` (a SPIR-V module of the OpenCL environment) with `build_flags` (the
    // -cl-* options of zeModuleCreate; unknown ones are ignored). MODULE_BUILD_FAILURE with
    // the translator's message in `log` for a blob that is not SPIR-V, truncated, or uses
    // what no target here compiles; UNSUPPORTED_FEATURE when !available().
    static ze_result_t from_spirv(std::span<const uint8_t> spirv, std::string_view build_flags,
                                  std::shared_ptr<const Program>* out, std::string* log);

    // The kernels, in the order the SPIR-V declares them.
    virtual const std::vector<KernelInfo>& kernels() const = 0;
    // Index of the kernel named `name` in kernels(); -1 when none.
    virtual int find(std::string_view name) const = 0;
    // The program-scope variables the module exports, in the order it declares them.
    virtual const std::vector<GlobalInfo>& globals() const = 0;
    // The names of the functions and variables the module imports (SPIR-V Import linkage),
    // which HostModule::link resolves; empty when it imports nothing.
    virtual const std::vector<std::string>& imports() const = 0;
    // The names the module exports (SPIR-V Export linkage): its kernels, and the functions
    // and variables it does not declare static.
    virtual const std::vector<std::string>& exports() const = 0;
    // A digest of the SPIR-V and the build flags (the cache key, with the target).
    virtual const std::array<uint8_t, 32>& digest() const = 0;
};

// Arguments of one launch on the host, one entry per ArgInfo of the kernel: for value and
// pointer arguments the bytes (pointers: the 8-byte address), for local arguments the
// byte count. local_sizes may be empty when the kernel has no __local argument.
struct LaunchArgs {
    std::span<const void* const> values;  // argument i's bytes (unused for local)
    std::span<const size_t> local_sizes;  // argument i's __local bytes (0 for others)
};

class HostModule;

// A module whose exports a link may take (HostModule::link): its program, and its host code,
// which holds its variables (null while the module itself waits for a link).
struct LinkSource {
    std::shared_ptr<const Program> program;
    std::shared_ptr<const HostModule> host;
};

// Host machine code of a Program for the sim device (LLVM's ORC JIT), built once per
// program digest and cached.
class HostModule {
public:
    virtual ~HostModule() = default;

    // Compiles `program` for the host. MODULE_BUILD_FAILURE with a log on failure; a program
    // with imports() is built by link.
    static ze_result_t build(const std::shared_ptr<const Program>& program, std::shared_ptr<const HostModule>* out,
                             std::string* log);
    // Compiles `program` for the host with its imports() resolved against the exports() of
    // `sources`: each imported function is built into this code from the source exporting
    // it, with the functions it calls (their own imports resolved the same way), so kernels
    // call it as one of their own; the imported variables, and the source's variables that
    // code uses, are the source's own storage (its host's global_address). `used` gets the
    // indexes of the sources whose variables the code uses: it refers to their storage, so
    // the caller keeps them alive (functions are copied: their source may go). A source's
    // variables need its host code, so `used` always follows the order in which sources
    // were built, and never forms a cycle. MODULE_LINK_FAILURE with the names in
    // `log` for an import that no source exports, or several do, and for imported code
    // that uses a variable its module does not export (a `static` one: only its own module
    // reaches it); NOT_READY when a variable it needs is of a source without host code yet.
    // Linked code is not cached: it is compiled at each link.
    static ze_result_t link(const std::shared_ptr<const Program>& program, std::span<const LinkSource> sources,
                            std::shared_ptr<const HostModule>* out, std::vector<size_t>* used, std::string* log);

    // Runs kernel `index` over `grid` with `args`, work-groups in parallel on the
    // compiler's thread pool, and returns when every group finished. Work-items of a group
    // honour barrier(); a kernel with barriers runs groups of at most 1024 work-items
    // (INVALID_GROUP_SIZE_DIMENSION above). get_work_dim() is the highest dimension with
    // more than one work-item. SUCCESS; INVALID_ARGUMENT for an index, arguments or a grid
    // that do not match; ERROR_UNKNOWN with `error` set when the kernel faulted (a bad
    // address, a trap): the process survives, the caller fails the command.
    virtual ze_result_t run(uint32_t index, const LaunchArgs& args, const LaunchGrid& grid,
                            std::string* error) const = 0;
    // Where program-scope variable `index` of the program's globals() lives in this module's
    // code: each HostModule has storage of its own, initialised as the program says, for
    // as long as it lives. Null for an index past the last.
    virtual void* global_address(size_t index) const = 0;
    // The address of function `name` of the program as kernels call it through a pointer
    // (a function taken from an integer or a function pointer, SPV_INTEL_function_pointers):
    // its host code, which takes the work-item context after its own parameters, as every
    // call in the lowered code passes it. Functions the module exports that are not kernels
    // and reach no barrier have one (a work-item cannot suspend inside a call through a
    // pointer); null for any other name.
    virtual void* function_address(std::string_view name) const = 0;
};

// PTX for an NVIDIA GPU of compute capability `sm` (e.g. 80, 90; targets newer than LLVM
// knows are emitted for the newest it knows, which the CUDA driver JIT-compiles
// forward), with libclc's OpenCL builtins linked in; cached like host modules.
// MODULE_BUILD_FAILURE with a log on failure.
//
// What a CUDA launch of this PTX passes (one .entry per kernel, named as in kernels()):
// - value arguments: their bytes; pointer arguments: the 8-byte device address;
// - a __local argument: a 64-bit byte offset (uint64_t) into the launch's dynamic shared
//   memory (the .extern .shared array zehal_dynamic_shared). The launch lays the __local
//   arguments out in argument order, each at an offset aligned to 16 bytes, and asks for
//   their total as the launch's dynamic shared memory (cuLaunchKernel's sharedMemBytes);
//   static __local variables are static shared memory, not part of that total;
// - after the kernel's own parameters, three 32-bit ones: the launch's global offset (x, y, z),
//   which get_global_offset() returns and get_global_id() includes; the PTX begins with
//   ptx_header (ptx_header.hpp), so that the PTX loaded again as a native module is known to
//   take them and keeps the source attributes, which SPIR-V keeps and PTX has no place for;
// - reqd_work_group_size is in the PTX as .reqntid;
// - get_work_dim() is the highest dimension with more than one work-item in the launch.
ze_result_t emit_ptx(const Program& program, uint32_t sm, std::string* ptx, std::string* log);

// How many compilations (host code or PTX generated, not found in a cache) this process
// ran: a cache hit leaves it unchanged.
uint64_t compilation_count() noexcept;

}  // namespace zehal::compiler
