// Kernels of the CUDA backend: CudaDevice::do_create_module and do_record_on_stream, CudaModule,
// CudaKernel and CudaQueue's launch hook.
#include "hal/cuda/cuda_module.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <new>
#include <string_view>
#include <utility>

#include "common/clock.hpp"
#include "compiler/float_atomics.hpp"
#include "compiler/program.hpp"
#include "compiler/ptx_header.hpp"
#include "hal/cuda/cuda_event.hpp"
#include "hal/cuda/cuda_queue.hpp"

namespace zehal::cuda {

namespace {

// Whether PTX text or a cubin calls vprintf: PTX declares it by name, a cubin's symbol table
// names it (an external function the driver links).
bool calls_vprintf(std::span<const uint8_t> native) {
    static constexpr std::string_view kName = "vprintf";
    const auto* begin = reinterpret_cast<const char*>(native.data());
    return std::search(begin, begin + native.size(), kName.begin(), kName.end()) != begin + native.size();
}

constexpr uint32_t format_bit(hal::ModuleFormat f) noexcept { return 1u << static_cast<uint32_t>(f); }

// Bytes of the JIT's error log kept.
constexpr size_t kLogBytes = 16u << 10;
// Alignment of each __local argument in dynamic shared memory.
constexpr uint64_t kLocalAlignment = 16;

bool is_identifier(char c) noexcept { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$'; }

// Bytes of a PTX scalar type (".u64" → 8); 0 when `type` is none.
uint32_t ptx_type_size(std::string_view type) noexcept {
    if (type.size() < 3 || type[0] != '.' || !std::strchr("usbf", type[1])) return 0;
    const std::string_view bits = type.substr(2);
    if (bits == "8") return 1;
    if (bits == "16") return 2;
    if (bits == "32") return 4;
    if (bits == "64") return 8;
    return 0;
}

// The size of one parameter declaration (".param .align 8 .b8 p[24]" → 24).
bool parse_param(std::string_view decl, uint32_t* size) {
    uint32_t element = 0;
    size_t pos = 0;
    while (pos < decl.size()) {
        while (pos < decl.size() && std::isspace(static_cast<unsigned char>(decl[pos]))) ++pos;
        size_t end = pos;
        while (end < decl.size() && !std::isspace(static_cast<unsigned char>(decl[end]))) ++end;
        const std::string_view word = decl.substr(pos, end - pos);
        if (uint32_t s = ptx_type_size(word)) element = s;
        pos = end;
    }
    if (element == 0) return false;
    uint32_t count = 1;
    if (const size_t open = decl.find('['); open != std::string_view::npos) {
        count = 0;
        for (size_t i = open + 1; i < decl.size() && std::isdigit(static_cast<unsigned char>(decl[i])); ++i)
            count = count * 10 + static_cast<uint32_t>(decl[i] - '0');
    }
    *size = element * count;
    return *size != 0;
}

// `ptx` without its // and /* */ comments.
std::string strip_comments(std::string_view ptx) {
    std::string out;
    out.reserve(ptx.size());
    for (size_t i = 0; i < ptx.size(); ++i) {
        if (ptx.compare(i, 2, "//") == 0) {
            while (i < ptx.size() && ptx[i] != '\n') ++i;
        } else if (ptx.compare(i, 2, "/*") == 0) {
            const size_t end = ptx.find("*/", i + 2);
            i = end == std::string_view::npos ? ptx.size() : end + 1;
            continue;
        }
        if (i < ptx.size()) out += ptx[i];
    }
    return out;
}

// True when `binary` reads as PTX text (a .version directive in printable text).
bool looks_like_ptx(std::span<const uint8_t> binary) {
    const std::string_view text(reinterpret_cast<const char*>(binary.data()), binary.size());
    if (text.find(".version") == std::string_view::npos) return false;
    return std::all_of(text.begin(), text.end(),
                       [](char c) { return c == '\0' || c == '\n' || c == '\r' || c == '\t' || (c >= 32 && c < 127); });
}

// True for an ELF image (cubin) or a fatbin.
bool looks_like_cubin(std::span<const uint8_t> binary) {
    static constexpr uint8_t kElf[4] = {0x7F, 'E', 'L', 'F'};
    static constexpr uint8_t kFatbin[4] = {0x50, 0xED, 0x55, 0xBA};  // 0xBA55ED50, little-endian
    return binary.size() >= 4 &&
           (std::memcmp(binary.data(), kElf, 4) == 0 || std::memcmp(binary.data(), kFatbin, 4) == 0);
}

bool is_build_error(CUresult r) noexcept {
    return r == CUDA_ERROR_INVALID_PTX || r == CUDA_ERROR_INVALID_IMAGE || r == CUDA_ERROR_NO_BINARY_FOR_GPU ||
           r == CUDA_ERROR_UNSUPPORTED_PTX_VERSION || r == CUDA_ERROR_JIT_COMPILER_NOT_FOUND ||
           r == CUDA_ERROR_INVALID_SOURCE || r == CUDA_ERROR_SHARED_OBJECT_INIT_FAILED;
}

// Loads `image` (PTX NUL-terminated, or a cubin) with the JIT's error log into `log`.
CUresult load_image(const DriverApi& api, const void* image, CUmodule* module, std::string* log) {
    std::string buffer(kLogBytes, '\0');
    CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* values[] = {buffer.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(buffer.size()))};
    const CUresult r = api.cuModuleLoadDataEx(module, image, 2, options, values);
    if (r != CUDA_SUCCESS) {
        buffer.resize(std::strlen(buffer.c_str()));
        *log = buffer.empty() ? "cuModuleLoadDataEx: " + error_name(api, r) : buffer;
    }
    return r;
}

}  // namespace

void describe_compute(const DriverApi& api, CUdevice device, hal::DeviceProperties* props) {
    props->module_formats = format_bit(hal::ModuleFormat::native);
    if (compiler::available()) {
        // The same on every compute capability: where the NVPTX backend has no native atomic
        // (a double add before sm_60), LLVM writes a compare-and-swap loop.
        props->module_formats |= format_bit(hal::ModuleFormat::spirv);
        props->fp16_atomics = props->fp32_atomics = props->fp64_atomics = compiler::kFloatAtomics;
    }
    int v[9] = {};
    const CUdevice_attribute attrs[9] = {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
                                         CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X,
                                         CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y,
                                         CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z,
                                         CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X,
                                         CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y,
                                         CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z,
                                         CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                         CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK};
    for (int i = 0; i < 9; ++i)
        if (api.cuDeviceGetAttribute(&v[i], attrs[i], device) != CUDA_SUCCESS) v[i] = 0;
    props->max_group_size = static_cast<uint32_t>(v[0]);
    props->max_group_dims = {static_cast<uint32_t>(v[1]), static_cast<uint32_t>(v[2]), static_cast<uint32_t>(v[3])};
    props->max_group_count = {static_cast<uint32_t>(v[4]), static_cast<uint32_t>(v[5]), static_cast<uint32_t>(v[6])};
    props->max_local_bytes = static_cast<uint32_t>(std::max(v[7], v[8]));
    if (!compiler::available()) {
        const std::string reason = "no SPIR-V modules: " + std::string(compiler::unavailable_reason());
        props->limits += props->limits.empty() ? reason : "; " + reason;
    }
}

bool parse_ptx_entries(std::string_view ptx, std::vector<PtxEntry>* out) {
    const std::string text = strip_comments(ptx);
    out->clear();
    for (size_t at = text.find(".entry"); at != std::string::npos; at = text.find(".entry", at + 6)) {
        if (at + 6 >= text.size() || !std::isspace(static_cast<unsigned char>(text[at + 6]))) continue;
        size_t pos = at + 6;
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
        const size_t name_end = std::find_if_not(text.begin() + pos, text.end(), is_identifier) - text.begin();
        if (name_end == pos) return false;
        PtxEntry entry{text.substr(pos, name_end - pos), {}};
        pos = name_end;
        while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
        if (pos < text.size() && text[pos] == '(') {
            const size_t close = text.find(')', pos);
            if (close == std::string::npos) return false;
            std::string_view params(text.data() + pos + 1, close - pos - 1);
            while (!params.empty()) {
                const size_t comma = params.find(',');
                const std::string_view decl = params.substr(0, comma);
                if (decl.find(".param") != std::string_view::npos) {
                    uint32_t size = 0;
                    if (!parse_param(decl, &size)) return false;
                    entry.param_sizes.push_back(size);
                }
                params = comma == std::string_view::npos ? std::string_view() : params.substr(comma + 1);
            }
        }
        out->push_back(std::move(entry));
    }
    return true;
}

LocalLayout layout_locals(std::span<const size_t> local_sizes) {
    LocalLayout layout;
    layout.offsets.assign(local_sizes.size(), 0);
    for (size_t i = 0; i < local_sizes.size(); ++i) {
        if (local_sizes[i] == 0) continue;
        layout.total = (layout.total + kLocalAlignment - 1) / kLocalAlignment * kLocalAlignment;
        layout.offsets[i] = layout.total;
        layout.total += local_sizes[i];
    }
    return layout;
}

// ---------------------------------------------------------------- CudaDevice

ze_result_t CudaDevice::do_create_module(hal::ModuleFormat format, std::span<const uint8_t> binary,
                                         std::string_view build_flags, std::shared_ptr<hal::Module>* out,
                                         std::string* log) {
    if (ze_result_t r = ready(); r != ZE_RESULT_SUCCESS) return r;
    return CudaModule::create(std::static_pointer_cast<CudaDevice>(shared_from_this()), format, binary, build_flags,
                              out, log);
}

ze_result_t CudaDevice::do_record_on_stream(uintptr_t stream, const hal::EventRef& event, hal::StreamMark mark) {
    CudaEvent* e = cuda_event_of(event, *this);
    if (ze_result_t r = ready(); r != ZE_RESULT_SUCCESS) return r;
    ContextScope scope(api_, ctx_);
    auto* s = reinterpret_cast<CUstream>(stream);
    EventSlot* slot = e->slot();
    // The same timer kernels a queue's commands put around their work, on the user's stream.
    if (mark == hal::StreamMark::start) {
        e->note_submission(host_now_ns(), this);
        return check(kernels_.timestamp(api_, s, &slot->start));
    }
    return check(kernels_.timestamp_signal(api_, s, &slot->end, &slot->flag, kSignalledWithTimestamps));
}

// ---------------------------------------------------------------- CudaModule

ze_result_t CudaModule::create(const std::shared_ptr<CudaDevice>& device, hal::ModuleFormat format,
                               std::span<const uint8_t> binary, std::string_view build_flags,
                               std::shared_ptr<hal::Module>* out, std::string* log) {
    const DriverApi& api = device->api();
    std::vector<hal::KernelProperties> kernels;
    std::string text;  // PTX, NUL-terminated
    bool names_known = true;
    // Kernels built from SPIR-V take the global offset after their own parameters, and so do
    // those of a native module that is such PTX again (zeModuleGetNativeBinary's).
    bool takes_offset = format == hal::ModuleFormat::spirv;
    if (format == hal::ModuleFormat::spirv) {
        std::shared_ptr<const compiler::Program> program;
        if (ze_result_t r = compiler::Program::from_spirv(binary, build_flags, &program, log); r != ZE_RESULT_SUCCESS)
            return r;
        if (!program->imports().empty()) {
            // A CUmodule is one image: linking another module's PTX into it (cuLinkAddData)
            // would give it copies of that module's variables, not the module's own storage.
            *log = "zehal: modules with imports (" + program->imports().front() +
                   ", ...) cannot be linked on CUDA devices: a CUDA module is one image, and linking "
                   "another module's code into it copies that module's variables";
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        }
        int major = 0, minor = 0;
        api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device->handle());
        api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device->handle());
        const auto sm = static_cast<uint32_t>(major * 10 + minor);
        if (ze_result_t r = compiler::emit_ptx(*program, sm, &text, log); r != ZE_RESULT_SUCCESS) return r;
        for (const compiler::KernelInfo& k : program->kernels()) kernels.push_back(hal::properties_of_compiled(k));
    } else if (looks_like_ptx(binary)) {
        text.assign(reinterpret_cast<const char*>(binary.data()), binary.size());
        std::vector<PtxEntry> entries;
        if (!parse_ptx_entries(text, &entries)) {
            *log = "a kernel entry of the PTX cannot be read";
            return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        }
        takes_offset = compiler::ptx_takes_global_offset(text);
        const std::map<std::string, std::string> attributes = compiler::ptx_source_attributes(text);
        for (PtxEntry& e : entries) {
            if (takes_offset) {
                if (e.param_sizes.size() < 3) {
                    *log = "kernel " + e.name +
                           " of the PTX lacks the global offset parameters its first line promises";
                    return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
                }
                e.param_sizes.resize(e.param_sizes.size() - 3);
            }
            hal::KernelProperties p;
            if (auto a = attributes.find(e.name); a != attributes.end()) p.source_attributes = a->second;
            p.name = std::move(e.name);
            for (uint32_t size : e.param_sizes) p.args.push_back({hal::KernelArgKind::value, size});
            kernels.push_back(std::move(p));
        }
    } else if (!looks_like_cubin(binary)) {
        *log = "a native module on CUDA is PTX text, a cubin or a fatbin; this binary is none of them";
        return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
    }
    text.resize(std::strlen(text.c_str()));  // up to the first NUL, then one NUL after it

    ContextScope scope(api, device->context());
    CUmodule module = nullptr;
    const void* image = text.empty() ? static_cast<const void*>(binary.data()) : text.c_str();
    if (CUresult r = load_image(api, image, &module, log); r != CUDA_SUCCESS) {
        if (is_build_error(r)) return ZE_RESULT_ERROR_MODULE_BUILD_FAILURE;
        return r == CUDA_ERROR_OUT_OF_MEMORY ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY : device->check(r);
    }
    if (text.empty()) {  // a cubin: its kernels from the driver where it can list them
        unsigned count = 0;
        names_known = api.cuModuleGetFunctionCount && api.cuModuleEnumerateFunctions && api.cuFuncGetName &&
                      api.cuModuleGetFunctionCount(&count, module) == CUDA_SUCCESS;
        std::vector<CUfunction> functions(count);
        if (names_known && count)
            names_known = api.cuModuleEnumerateFunctions(functions.data(), count, module) == CUDA_SUCCESS;
        for (size_t i = 0; names_known && i < count; ++i) {
            const char* name = nullptr;
            names_known = api.cuFuncGetName(&name, functions[i]) == CUDA_SUCCESS && name;
            if (names_known) {
                hal::KernelProperties p;
                p.name = name;
                kernels.push_back(std::move(p));
            }
        }
        if (!names_known) kernels.clear();
    }
    const std::vector<uint8_t> native = text.empty() ? std::vector<uint8_t>(binary.begin(), binary.end())
                                                     : std::vector<uint8_t>(text.begin(), text.end());
    try {
        *out = std::make_shared<CudaModule>(device, module, native, std::move(kernels), names_known, takes_offset);
    } catch (const std::bad_alloc&) {
        api.cuModuleUnload(module);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

CudaModule::CudaModule(std::shared_ptr<CudaDevice> device, CUmodule module, std::vector<uint8_t> native,
                       std::vector<hal::KernelProperties> kernels, bool names_known, bool takes_offset)
    : device_(std::move(device)),
      module_(module),
      native_(std::move(native)),
      kernels_(std::move(kernels)),
      names_known_(names_known),
      prints_(calls_vprintf(native_)),
      takes_offset_(takes_offset) {}

CudaModule::~CudaModule() {
    ContextScope scope(device_->api(), device_->context());
    device_->api().cuModuleUnload(module_);
}

std::vector<std::string> CudaModule::kernel_names() const {
    std::vector<std::string> names;
    for (const hal::KernelProperties& k : kernels_) names.push_back(k.name);
    return names;
}

ze_result_t CudaModule::global_pointer(std::string_view name, size_t* size, void** pointer) const {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    const DriverApi& api = device_->api();
    ContextScope scope(api, device_->context());
    CUdeviceptr address = 0;
    size_t bytes = 0;
    const std::string global_name(name);
    // A name the module does not hold as a variable is NOT_FOUND, or INVALID_VALUE when it
    // names something else, such as one of its kernels (seen on CUDA 13).
    if (CUresult r = api.cuModuleGetGlobal(&address, &bytes, module_, global_name.c_str()); r != CUDA_SUCCESS)
        return r == CUDA_ERROR_NOT_FOUND || r == CUDA_ERROR_INVALID_VALUE ? ZE_RESULT_ERROR_INVALID_GLOBAL_NAME
                                                                          : device_->check(r);
    if (size) *size = bytes;
    if (pointer) *pointer = reinterpret_cast<void*>(static_cast<uintptr_t>(address));
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaModule::signature_from_driver(CUfunction f, std::string_view name, hal::KernelProperties* out) const {
    const DriverApi& api = device_->api();
    if (!api.cuFuncGetParamInfo) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    out->name = name;
    out->args.clear();
    for (size_t i = 0;; ++i) {
        size_t offset = 0, size = 0;
        // Past the last parameter the driver answers INVALID_VALUE.
        if (api.cuFuncGetParamInfo(f, i, &offset, &size) != CUDA_SUCCESS) break;
        out->args.push_back({hal::KernelArgKind::value, static_cast<uint32_t>(size)});
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t CudaModule::create_kernel(std::string_view name, std::shared_ptr<hal::Kernel>* out) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const DriverApi& api = device_->api();
    const auto known = std::find_if(kernels_.begin(), kernels_.end(),
                                    [&](const hal::KernelProperties& k) { return k.name == name; });
    if (names_known_ && known == kernels_.end()) return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
    ContextScope scope(api, device_->context());
    CUfunction f = nullptr;
    const std::string kernel_name(name);
    if (CUresult r = api.cuModuleGetFunction(&f, module_, kernel_name.c_str()); r != CUDA_SUCCESS)
        return r == CUDA_ERROR_NOT_FOUND ? ZE_RESULT_ERROR_INVALID_KERNEL_NAME : device_->check(r);
    try {
        hal::KernelProperties props;
        // A cubin's parameters come from the driver (its listed kernels carry only names).
        const bool from_driver = known == kernels_.end() || (native_.size() && looks_like_cubin(native_));
        if (from_driver) {
            if (ze_result_t r = signature_from_driver(f, name, &props); r != ZE_RESULT_SUCCESS) return r;
        } else {
            props = *known;
        }
        int threads = 0, shared = 0, private_bytes = 0;
        if (api.cuFuncGetAttribute(&threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) == CUDA_SUCCESS)
            props.max_group_size = static_cast<uint32_t>(threads);
        if (api.cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS)
            props.local_bytes = std::max(props.local_bytes, static_cast<uint32_t>(shared));
        if (api.cuFuncGetAttribute(&private_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, f) == CUDA_SUCCESS)
            props.private_bytes = static_cast<uint32_t>(private_bytes);
        const hal::KernelLimits limits = hal::KernelLimits::of(device_->properties());
        // Dynamic shared memory (the __local arguments) may use what the static part leaves.
        if (limits.max_local_bytes > props.local_bytes)
            api.cuFuncSetAttribute(f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   static_cast<int>(limits.max_local_bytes - props.local_bytes));
        *out = std::make_shared<CudaKernel>(shared_from_this(), f, std::move(props), limits);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

CudaKernel::CudaKernel(std::shared_ptr<const CudaModule> module, CUfunction function, hal::KernelProperties props,
                       const hal::KernelLimits& limits)
    : KernelState(std::move(props), limits),
      module_(std::move(module)),
      function_(function) {}

ze_result_t CudaKernel::set_global_offset(uint32_t x, uint32_t y, uint32_t z) {
    if (!module_->takes_offset()) return hal::Kernel::set_global_offset(x, y, z);
    return KernelState::set_global_offset(x, y, z);
}

// ---------------------------------------------------------------- CudaQueue

bool CudaQueue::owns_kernel(const hal::Kernel& kernel) const noexcept {
    const auto* k = dynamic_cast<const CudaKernel*>(&kernel);
    return k && &k->module().device() == device_.get();
}

ze_result_t CudaQueue::do_append_launch_indirect(std::span<const hal::KernelRef>, const hal::GroupCount*,
                                                 const uint32_t*, hal::PlacedIndirectLaunch&, const hal::EventRef&,
                                                 std::span<const hal::EventRef>) {
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ze_result_t CudaQueue::do_append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, hal::PlacedLaunch& launch,
                                        const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    auto& k = static_cast<CudaKernel&>(kernel);
    const hal::LaunchSnapshot& args = launch.args;
    auto* signal_event = static_cast<CudaEvent*>(signal.get());
    // Pageable memory is the kernel's only where the GPU walks the host's page tables.
    if (!device_->properties().kernels_use_system_memory)
        for (const hal::PlacedOperand& p : launch.pointers)
            if (hal::is_pageable(p.operand.placement)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    LocalLayout locals;
    std::vector<void*> params;
    try {
        locals = layout_locals(args.local_sizes);
        params.resize(args.values.size());
        if (k.module().takes_offset())
            for (const uint32_t& o : args.global_offset) params.push_back(const_cast<uint32_t*>(&o));
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    const std::vector<hal::KernelArg>& sig = k.properties().args;
    // The first global pointer argument into imported export memory makes the launch an
    // export write, as on the sim device: the word there once the kernel ran. Only while the
    // export group is traced (probe_export_locked), so other launches do not search.
    const bool traced = device_->trace() && device_->trace()->probes_exports();
    const hal::Allocation* exported = nullptr;
    const void* exported_at = nullptr;
    for (size_t i = 0; i < sig.size(); ++i) {
        params[i] = sig[i].kind == hal::KernelArgKind::local ? &locals.offsets[i] : const_cast<void*>(args.values[i]);
        const void* p = traced && sig[i].kind == hal::KernelArgKind::global ? args.pointer(i) : nullptr;
        for (const hal::PlacedOperand& o : launch.pointers) {
            if (exported || !p) break;
            const hal::Allocation& a = o.operand.allocation;
            const auto at = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(a.info.base);
            if (o.operand.placement == hal::Placement::device && a.info.imported && at < a.info.size) {
                exported = &a;
                exported_at = p;
            }
        }
    }
    ContextScope scope(api_, device_->context());
    std::lock_guard lock(mu_);
    CUresult r = begin_locked(signal_event, waits);
    if (r == CUDA_SUCCESS)
        r = api_.cuLaunchKernel(k.function(), groups[0], groups[1], groups[2], args.group_size[0], args.group_size[1],
                                args.group_size[2], static_cast<unsigned>(locals.total), stream_, params.data(),
                                nullptr);
    if (r == CUDA_SUCCESS && k.module().prints()) r = device_->printf_flush().mark(api_, stream_);
    if (r == CUDA_SUCCESS && exported) {
        const auto end = reinterpret_cast<uintptr_t>(exported->info.base) + exported->info.size;
        const size_t bytes = std::min<size_t>(sizeof(uint32_t), end - reinterpret_cast<uintptr_t>(exported_at));
        r = probe_export_locked(*exported, exported_at, bytes);
    }
    if (r == CUDA_SUCCESS) r = end_locked(signal_event);
    return device_->check(r);
}

}  // namespace zehal::cuda
