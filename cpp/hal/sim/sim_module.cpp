// Kernels of the software device: SimDevice::do_create_module, SimModule, SimKernel, SimLaunch
// and SimQueue's launch hook.
#include "hal/sim/sim_module.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <new>
#include <utility>

#include "compiler/float_atomics.hpp"
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
        props->fp16_atomics = props->fp32_atomics = props->fp64_atomics = compiler::kFloatAtomics;
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
    std::shared_ptr<hal::Module> module;
    if (ze_result_t r = SimModule::create(domain_, hal::KernelLimits::of(props_), binary, build_flags, &module, log);
        r != ZE_RESULT_SUCCESS)
        return r;
    if (ze_result_t r = static_cast<SimModule&>(*module).register_globals(*this); r != ZE_RESULT_SUCCESS) return r;
    *out = std::move(module);
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimDevice::add_module_global(void* base, size_t size) {
    hal::Allocation a;
    a.info.kind = hal::MemoryKind::device;
    a.info.base = base;
    a.info.size = size;
    // The alignment the address has (up to a cache line): the variable's, or more.
    a.info.alignment = std::min<size_t>(size_t{1} << std::countr_zero(reinterpret_cast<uintptr_t>(base)), 64);
    try {
        std::lock_guard lock(module_globals_mu_);
        module_globals_.insert(base);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    // No mapping: the module's code owns the memory, so releasing the entry frees nothing.
    if (ze_result_t r = memory_.insert(a); r != ZE_RESULT_SUCCESS) {
        std::lock_guard lock(module_globals_mu_);
        module_globals_.erase(base);
        return r;
    }
    return ZE_RESULT_SUCCESS;
}

void SimDevice::remove_module_global(void* base) {
    hal::Allocation a;
    // Waits until no command holds the variable: the module's code goes after this.
    memory_.remove(base, &a);
    std::lock_guard lock(module_globals_mu_);
    module_globals_.erase(base);
}

// ---------------------------------------------------------------- SimModule

ze_result_t SimModule::create(std::shared_ptr<const hal::EventDomain> domain, const hal::KernelLimits& limits,
                              std::span<const uint8_t> spirv, std::string_view build_flags,
                              std::shared_ptr<hal::Module>* out, std::string* log) {
    std::shared_ptr<const compiler::Program> program;
    if (ze_result_t r = compiler::Program::from_spirv(spirv, build_flags, &program, log); r != ZE_RESULT_SUCCESS)
        return r;
    // A module with imports gets its host code when it is linked.
    std::shared_ptr<const compiler::HostModule> host;
    if (program->imports().empty())
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

SimModule::~SimModule() {
    // The device may be gone: its memory went with it.
    if (const hal::DeviceRef device = registered_with_.lock())
        for (void* base : registered_) static_cast<SimDevice&>(*device).remove_module_global(base);
}

std::shared_ptr<const compiler::HostModule> SimModule::host() const {
    std::lock_guard lock(link_mu_);
    return host_;
}

ze_result_t SimModule::register_globals(SimDevice& device) {
    std::lock_guard lock(link_mu_);
    registered_with_ = device.weak_from_this();
    return host_ ? register_locked(device, *host_) : ZE_RESULT_SUCCESS;
}

ze_result_t SimModule::register_locked(SimDevice& device, const compiler::HostModule& host) {
    const std::vector<compiler::GlobalInfo>& globals = program_->globals();
    try {
        registered_.reserve(globals.size());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (size_t i = 0; i < globals.size(); ++i) {
        void* base = host.global_address(i);
        if (ze_result_t r = device.add_module_global(base, globals[i].size); r != ZE_RESULT_SUCCESS) return r;
        registered_.push_back(base);
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimModule::global_pointer(std::string_view name, size_t* size, void** pointer) const {
    if (domain_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    const std::vector<compiler::GlobalInfo>& globals = program_->globals();
    for (size_t i = 0; i < globals.size(); ++i) {
        if (globals[i].name != name) continue;
        const std::shared_ptr<const compiler::HostModule> code = host();
        if (!code) return ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED;
        if (size) *size = globals[i].size;
        if (pointer) *pointer = code->global_address(i);
        return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
}

ze_result_t SimModule::function_pointer(std::string_view name, void** pointer) const {
    if (domain_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!pointer) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const std::vector<std::string>& exports = program_->exports();
    const bool variable = std::any_of(program_->globals().begin(), program_->globals().end(),
                                      [&](const compiler::GlobalInfo& g) { return g.name == name; });
    if (variable || std::find(exports.begin(), exports.end(), name) == exports.end())
        return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
    const std::shared_ptr<const compiler::HostModule> code = host();
    if (!code) return ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED;
    // Kernels, and functions that reach a barrier, have no address kernels could call.
    void* address = code->function_address(name);
    if (!address) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    *pointer = address;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimModule::adopt(std::shared_ptr<const compiler::HostModule> host,
                             std::vector<std::shared_ptr<const SimModule>> exporters) {
    std::lock_guard lock(link_mu_);
    if (host_) return ZE_RESULT_SUCCESS;
    // Registered first: a module whose variables are not device memory is not linked.
    if (const hal::DeviceRef device = registered_with_.lock())
        if (ze_result_t r = register_locked(static_cast<SimDevice&>(*device), *host); r != ZE_RESULT_SUCCESS) return r;
    host_ = std::move(host);
    exporters_ = std::move(exporters);
    return ZE_RESULT_SUCCESS;
}

namespace {

// One module of a link: the module, the host code it has or the link built, and the
// modules whose variables that code uses.
struct LinkEntry {
    std::shared_ptr<SimModule> module;
    std::shared_ptr<const compiler::HostModule> host;
    bool built = false;  // by this link
    std::vector<std::shared_ptr<const SimModule>> exporters;
};

// Builds the host code of `entries[i]` against the others; NOT_READY while a variable it
// binds is of a module without host code yet.
ze_result_t build_linked(std::vector<LinkEntry>& entries, size_t i,
                         const std::shared_ptr<const compiler::Program>& program, std::string* log) {
    std::vector<compiler::LinkSource> sources;
    std::vector<size_t> entry_of;
    for (size_t j = 0; j < entries.size(); ++j) {
        if (j == i) continue;
        sources.push_back({entries[j].module->program(), entries[j].host});
        entry_of.push_back(j);
    }
    std::vector<size_t> used;
    if (ze_result_t r = compiler::HostModule::link(program, sources, &entries[i].host, &used, log);
        r != ZE_RESULT_SUCCESS)
        return r;
    for (size_t s : used) entries[i].exporters.push_back(entries[entry_of[s]].module);
    entries[i].built = true;
    return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t SimModule::link(std::span<const hal::ModuleRef> modules, std::string* log) {
    if (domain_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    std::vector<LinkEntry> entries;
    try {
        for (const hal::ModuleRef& m : modules) {
            auto sim = std::dynamic_pointer_cast<SimModule>(m);
            if (!sim || !sim->belongs_to(*domain_)) {
                *log = "zehal: the modules of a link must be of one device";
                return ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
            }
            LinkEntry e;
            e.host = sim->host();
            e.module = std::move(sim);
            entries.push_back(std::move(e));
        }
        // Rounds: each builds the modules whose bound variables have storage.
        for (bool progress = true; progress;) {
            progress = false;
            bool waiting = false;
            for (size_t i = 0; i < entries.size(); ++i) {
                if (entries[i].host || !entries[i].module->has_imports()) continue;
                const ze_result_t r = build_linked(entries, i, entries[i].module->program(), log);
                if (r == ZE_RESULT_NOT_READY) {
                    waiting = true;
                    continue;
                }
                if (r != ZE_RESULT_SUCCESS) return r;
                progress = true;
            }
            if (waiting && !progress) {
                *log = "zehal: modules of the link bind each other's variables before either is linked; "
                       "link the module that exports the variables first";
                return ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
            }
        }
        for (LinkEntry& e : entries)
            if (e.built)
                if (ze_result_t r = e.module->adopt(std::move(e.host), std::move(e.exporters)); r != ZE_RESULT_SUCCESS)
                    return r;
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

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
    std::shared_ptr<const compiler::HostModule> code = host();
    if (!code) return ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED;
    try {
        const auto i = static_cast<uint32_t>(index);
        *out = std::make_shared<SimKernel>(shared_from_this(), std::move(code), i,
                                           hal::properties_of_compiled(program_->kernels()[i]), limits_);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

SimKernel::SimKernel(std::shared_ptr<const SimModule> module, std::shared_ptr<const compiler::HostModule> host,
                     uint32_t index, hal::KernelProperties props, const hal::KernelLimits& limits)
    : KernelState(std::move(props), limits),
      module_(std::move(module)),
      host_(std::move(host)),
      index_(index) {}

// ---------------------------------------------------------------- SimLaunch

SimLaunch::SimLaunch(std::shared_ptr<const compiler::HostModule> host, uint32_t index, hal::LaunchSnapshot args,
                     const hal::GroupCount& groups)
    : host_(std::move(host)),
      index_(index),
      args_(std::move(args)) {
    grid_.group_count = groups;
    grid_.group_size = args_.group_size;
    grid_.global_offset = args_.global_offset;
    holds_.reserve(args_.values.size());
}

SimLaunch::~SimLaunch() {
    for (hal::PointerRegistry::InFlight* h : holds_) hal::PointerRegistry::release(h);
}

ze_result_t SimLaunch::run(std::string* error) {
    const compiler::LaunchArgs args{args_.values, args_.local_sizes};
    return host_->run(index_, args, grid_, error);
}

ze_result_t SimLaunch::run_over(const hal::GroupCount& groups, std::string* error) {
    if (groups[0] == 0 || groups[1] == 0 || groups[2] == 0) return ZE_RESULT_SUCCESS;
    grid_.group_count = groups;
    return run(error);
}

// ---------------------------------------------------------------- SimIndirectLaunch

SimIndirectLaunch::SimIndirectLaunch(std::vector<std::unique_ptr<SimLaunch>> launches, const hal::GroupCount* groups,
                                     const uint32_t* count)
    : launches_(std::move(launches)),
      groups_(groups),
      count_(count) {
    holds_.reserve(2);
}

SimIndirectLaunch::~SimIndirectLaunch() {
    for (hal::PointerRegistry::InFlight* h : holds_) hal::PointerRegistry::release(h);
}

ze_result_t SimIndirectLaunch::run(std::string* error) {
    // The counts as they are now, after every command before this one on the queue.
    uint32_t count = static_cast<uint32_t>(launches_.size());
    if (count_) count = std::min(count, *count_);
    for (uint32_t i = 0; i < count; ++i) {
        hal::GroupCount groups;
        std::memcpy(groups.data(), &groups_[i], sizeof groups);
        if (ze_result_t r = launches_[i]->run_over(groups, error); r != ZE_RESULT_SUCCESS) return r;
    }
    return ZE_RESULT_SUCCESS;
}

// ---------------------------------------------------------------- SimQueue

bool SimQueue::owns_kernel(const hal::Kernel& kernel) const noexcept {
    const auto* k = dynamic_cast<const SimKernel*>(&kernel);
    return k && k->module().belongs_to(device_->domain());
}

namespace {

// The first exported memory a launch's pointer arguments point into (as a copy into it, the
// launch is then an export write: the word there once the kernel ran).
struct ExportWrite {
    void* at = nullptr;
    size_t bytes = 0;
    uint32_t group = kNoExport;
};

// Hands the holds of `launch`'s pointer arguments to `run` and finds its export write
// (unless `write` already has one).
void take_pointers(const SimKernel& kernel, hal::PlacedLaunch& launch, SimLaunch* run, ExportWrite* write) {
    const std::vector<hal::KernelArg>& sig = kernel.properties().args;
    for (size_t i = 0; i < launch.pointers.size(); ++i) {
        const hal::Allocation& a = launch.pointers[i].operand.allocation;
        if (hal::PointerRegistry::InFlight* held = launch.pointers[i].take_hold()) run->keep(held);
        if (write->group == kNoExport && sig[i].kind == hal::KernelArgKind::global &&
            SimDevice::export_group_of(a) != kNoExport) {
            write->group = SimDevice::export_group_of(a);
            write->at = const_cast<void*>(run->args().pointer(i));
            const uintptr_t end = reinterpret_cast<uintptr_t>(a.info.base) + a.info.size;
            write->bytes = std::min<size_t>(sizeof(uint32_t), end - reinterpret_cast<uintptr_t>(write->at));
        }
    }
}

}  // namespace

ze_result_t SimQueue::do_append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, hal::PlacedLaunch& launch,
                                       const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    auto& k = static_cast<SimKernel&>(kernel);
    std::unique_ptr<KernelWork> work;
    SimLaunch* run = nullptr;
    try {
        work = std::make_unique<SimLaunch>(k.host(), k.index(), std::move(launch.args), groups);
        run = static_cast<SimLaunch*>(work.get());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    // The pointer arguments stay held until the launch is over.
    ExportWrite write;
    take_pointers(k, launch, run, &write);
    return submit(CommandKind::kernel, write.at, nullptr, write.bytes, nullptr, 0, write.group, signal, waits, {}, {},
                  {}, &work);
}

ze_result_t SimQueue::do_append_launch_indirect(std::span<const hal::KernelRef> kernels, const hal::GroupCount* groups,
                                                const uint32_t* count, hal::PlacedIndirectLaunch& launch,
                                                const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    std::unique_ptr<KernelWork> work;
    SimIndirectLaunch* indirect = nullptr;
    ExportWrite write;
    try {
        std::vector<std::unique_ptr<SimLaunch>> runs;
        runs.reserve(kernels.size());
        for (size_t i = 0; i < kernels.size(); ++i) {
            auto& k = static_cast<SimKernel&>(*kernels[i]);
            runs.push_back(std::make_unique<SimLaunch>(k.host(), k.index(), std::move(launch.launches[i].args),
                                                       hal::GroupCount{1, 1, 1}));
            take_pointers(k, launch.launches[i], runs.back().get(), &write);
        }
        work = std::make_unique<SimIndirectLaunch>(std::move(runs), groups, count);
        indirect = static_cast<SimIndirectLaunch*>(work.get());
        indirect->keep(launch.groups.take_hold());
        indirect->keep(launch.count.take_hold());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return submit(CommandKind::kernel, write.at, nullptr, write.bytes, nullptr, 0, write.group, signal, waits, {}, {},
                  {}, &work);
}

}  // namespace zehal::sim
