// Modules and kernels of the CUDA backend: PTX or cubin loaded with cuModuleLoadDataEx into
// the device's primary context (SPIR-V becomes PTX through compiler::emit_ptx first), and
// launches with cuLaunchKernel on a queue's stream between the event machinery of copies.
//
// Arguments are passed as their bytes, one kernel parameter each. In a module built from
// SPIR-V, a __local pointer argument is a 64-bit byte offset into the kernel's dynamic
// shared memory (the compiler's lowering): a launch lays the local arguments out one after
// the other in argument order, each on a 16-byte boundary, passes each one's offset, and
// asks for their total as dynamic shared memory. Its kernels also take three trailing 32-bit
// parameters the launch fills with the kernel's global offset. Native modules (PTX text, cubin) have value
// arguments only: their parameters' sizes come from the PTX's .entry declarations (or, for
// a cubin, from cuFuncGetParamInfo), and pointers in them are the caller's to get right.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hal/cuda/cuda_device.hpp"
#include "hal/kernel_state.hpp"
#include "hal/module.hpp"

namespace zehal::cuda {

// The compute limits of `device` and the module formats (SPIR-V with the compiler, native
// always) into `props`.
void describe_compute(const DriverApi& api, CUdevice device, hal::DeviceProperties* props);

// A kernel entry of PTX text: its name and its parameters' sizes in bytes.
struct PtxEntry {
    std::string name;
    std::vector<uint32_t> param_sizes;
};
// The .entry declarations of `ptx`, in order; false when a declaration cannot be read.
bool parse_ptx_entries(std::string_view ptx, std::vector<PtxEntry>* out);

// Byte offset of each __local argument in a launch's dynamic shared memory, and the total.
struct LocalLayout {
    std::vector<uint64_t> offsets;  // per argument (0 for the others)
    uint64_t total = 0;
};
LocalLayout layout_locals(std::span<const size_t> local_sizes);

// A CUmodule of the device's primary context, unloaded when it goes. Thread-safe.
class CudaModule final : public hal::Module, public std::enable_shared_from_this<CudaModule> {
public:
    // Loads `binary` (PTX text or cubin/fatbin bytes for native; SPIR-V translated to PTX for
    // the device's compute capability). MODULE_BUILD_FAILURE with the compiler's or the JIT's
    // log; UNSUPPORTED_FEATURE for SPIR-V without the compiler (reason in `log`).
    static ze_result_t create(const std::shared_ptr<CudaDevice>& device, hal::ModuleFormat format,
                              std::span<const uint8_t> binary, std::string_view build_flags,
                              std::shared_ptr<hal::Module>* out, std::string* log);
    CudaModule(std::shared_ptr<CudaDevice> device, CUmodule module, std::vector<uint8_t> native,
               std::vector<hal::KernelProperties> kernels, bool names_known, bool takes_offset);
    ~CudaModule() override;

    std::vector<std::string> kernel_names() const override;
    ze_result_t create_kernel(std::string_view name, std::shared_ptr<hal::Kernel>* out) override;
    std::span<const uint8_t> native_binary() const override { return native_; }
    // cuModuleGetGlobal: a `.global` or `.const` variable of the module, device memory of the
    // context for as long as the module is loaded.
    ze_result_t global_pointer(std::string_view name, size_t* size, void** pointer) const override;

    CudaDevice& device() const noexcept { return *device_; }
    // Whether its code calls CUDA's device printf (vprintf): its launches mark the stream
    // for PrintfFlush.
    bool prints() const noexcept { return prints_; }
    // Whether its kernels take the global offset as three trailing parameters (built from
    // SPIR-V by compiler::emit_ptx); native kernels have no offset.
    bool takes_offset() const noexcept { return takes_offset_; }

private:
    // The signature of a cubin's kernel `f` from the driver (CUDA 12.4 and later).
    ze_result_t signature_from_driver(CUfunction f, std::string_view name, hal::KernelProperties* out) const;

    const std::shared_ptr<CudaDevice> device_;
    const CUmodule module_;
    const std::vector<uint8_t> native_;
    const std::vector<hal::KernelProperties> kernels_;
    const bool names_known_;  // false for a cubin on a driver that cannot list its kernels
    const bool prints_;
    const bool takes_offset_;
};

// A kernel of a CudaModule: arguments and group size of KernelState, and its CUfunction.
class CudaKernel final : public hal::KernelState {
public:
    CudaKernel(std::shared_ptr<const CudaModule> module, CUfunction function, hal::KernelProperties props,
               const hal::KernelLimits& limits);

    const CudaModule& module() const noexcept { return *module_; }
    CUfunction function() const noexcept { return function_; }
    // KernelState's rule where the module takes an offset; else only a zero offset.
    ze_result_t set_global_offset(uint32_t x, uint32_t y, uint32_t z) override;

private:
    const std::shared_ptr<const CudaModule> module_;
    const CUfunction function_;
};

}  // namespace zehal::cuda
