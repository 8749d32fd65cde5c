// Kernels of the software device: SimDevice::do_create_module, SimModule, SimKernel, SimLaunch
// and SimQueue's launch hook.
#include "hal/sim/sim_module.hpp"

#include <algorithm>
#include <new>
#include <utility>

#include "hal/sim/sim_device.hpp"
#include "hal/sim/sim_queue.hpp"

namespace zehal::sim {

namespace {

constexpr uint32_t format_bit(hal::ModuleFormat f) noexcept { return 1u << static_cast<uint32_t>(f); }

}  // namespace

void describe_kernels(hal::DeviceProperties* props) {
    props->max_group_size = kMaxGroupSize;
    props->max_group_dims = {kMaxGroupSize, kMaxGroupSize, kMaxGroupSize};
    props->max_group_count = {kMaxGroupCount, kMaxGroupCount, kMaxGroupCount};
    props->max_local_bytes = kMaxLocalBytes;
    if (compiler::available()) {
        props->module_formats = format_bit(hal::ModuleFormat::spirv) | format_bit(hal::ModuleFormat::native);
        return;
    }
    const std::string reason = "no kernels: " + std::string(compiler::unavailable_reason());
    props->limits += props->limits.empty() ? reason : "; " + reason;
}

// ---------------------------------------------------------------- SimDevice

ze_result_t SimDevice::do_create_module(hal::ModuleFormat, std::span<const uint8_t> binary,
                                        std::string_view build_flags, std::shared_ptr<hal::Module>* out,
                                        std::string* log) {
    // The native format of the sim device is the SPIR-V it was built from.
    return SimModule::create(domain_, hal::KernelLimits::of(props_), binary, build_flags, out, log);
}

// ---------------------------------------------------------------- SimModule

ze_result_t SimModule::create(std::shared_ptr<const hal::EventDomain> domain, const hal::KernelLimits& limits,
                              std::span<const uint8_t> spirv, std::string_view build_flags,
                              std::shared_ptr<hal::Module>* out, std::string* log) {
    std::shared_ptr<const compiler::Program> program;
    if (ze_result_t r = compiler::Program::from_spirv(spirv, build_flags, &program, log); r != ZE_RESULT_SUCCESS)
        return r;
    std::shared_ptr<const compiler::HostModule> host;
    if (ze_result_t r = compiler::HostModule::build(program, &host, log); r != ZE_RESULT_SUCCESS) return r;
    try {
        *out = std::make_shared<SimModule>(std::move(domain), limits, std::vector<uint8_t>(spirv.begin(), spirv.end()),
                                           std::move(program), std::move(host));
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

SimModule::SimModule(std::shared_ptr<const hal::EventDomain> domain, const hal::KernelLimits& limits,
                     std::vector<uint8_t> spirv, std::shared_ptr<const compiler::Program> program,
                     std::shared_ptr<const compiler::HostModule> host)
    : domain_(std::move(domain)),
      limits_(limits),
      spirv_(std::move(spirv)),
      program_(std::move(program)),
      host_(std::move(host)) {}

std::vector<std::string> SimModule::kernel_names() const {
    std::vector<std::string> names;
    for (const compiler::KernelInfo& k : program_->kernels()) names.push_back(k.name);
    return names;
}

ze_result_t SimModule::create_kernel(std::string_view name, std::shared_ptr<hal::Kernel>* out) {
    if (domain_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const int index = program_->find(name);
    if (index < 0) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    try {
        const auto i = static_cast<uint32_t>(index);
        *out = std::make_shared<SimKernel>(shared_from_this(), i, hal::properties_of_compiled(program_->kernels()[i]),
                                           limits_);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

SimKernel::SimKernel(std::shared_ptr<const SimModule> module, uint32_t index, hal::KernelProperties props,
                     const hal::KernelLimits& limits)
    : KernelState(std::move(props), limits),
      module_(std::move(module)),
      index_(index) {}

// ---------------------------------------------------------------- SimLaunch

SimLaunch::SimLaunch(std::shared_ptr<const compiler::HostModule> host, uint32_t index, hal::LaunchSnapshot args,
                     const hal::GroupCount& groups)
    : host_(std::move(host)),
      index_(index),
      args_(std::move(args)) {
    grid_.group_count = groups;
    grid_.group_size = args_.group_size;
    holds_.reserve(args_.values.size());
}

SimLaunch::~SimLaunch() {
    for (hal::PointerRegistry::InFlight* h : holds_) hal::PointerRegistry::release(h);
}

ze_result_t SimLaunch::run(std::string* error) {
    const compiler::LaunchArgs args{args_.values, args_.local_sizes};
    return host_->run(index_, args, grid_, error);
}

// ---------------------------------------------------------------- SimQueue

bool SimQueue::owns_kernel(const hal::Kernel& kernel) const noexcept {
    const auto* k = dynamic_cast<const SimKernel*>(&kernel);
    return k && k->module().belongs_to(device_->domain());
}

ze_result_t SimQueue::do_append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, hal::PlacedLaunch& launch,
                                       const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    auto& k = static_cast<SimKernel&>(kernel);
    std::unique_ptr<KernelWork> work;
    SimLaunch* run = nullptr;
    try {
        work = std::make_unique<SimLaunch>(k.module().host(), k.index(), std::move(launch.args), groups);
        run = static_cast<SimLaunch*>(work.get());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    // The pointer arguments stay held until the launch is over. The first one into exported
    // memory makes the launch an export write (as a copy into it is): the word there once
    // the kernel ran.
    void* exported = nullptr;
    size_t exported_bytes = 0;
    uint32_t export_group = kNoExport;
    const std::vector<hal::KernelArg>& sig = k.properties().args;
    for (size_t i = 0; i < launch.pointers.size(); ++i) {
        const hal::Allocation& a = launch.pointers[i].operand.allocation;
        if (hal::PointerRegistry::InFlight* held = launch.pointers[i].take_hold()) run->keep(held);
        if (export_group == kNoExport && sig[i].kind == hal::KernelArgKind::global &&
            SimDevice::export_group_of(a) != kNoExport) {
            export_group = SimDevice::export_group_of(a);
            exported = const_cast<void*>(run->args().pointer(i));
            const uintptr_t end = reinterpret_cast<uintptr_t>(a.info.base) + a.info.size;
            exported_bytes = std::min<size_t>(sizeof(uint32_t), end - reinterpret_cast<uintptr_t>(exported));
        }
    }
    return submit(CommandKind::kernel, exported, nullptr, exported_bytes, nullptr, 0, export_group, signal, waits, {},
                  {}, {}, &work);
}

}  // namespace zehal::sim
