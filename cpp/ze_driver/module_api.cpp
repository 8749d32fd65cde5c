// Modules (SEMANTICS §12): built by the device's HAL from SPIR-V or the backend's native
// format, their kernel names, native binary and program-scope variables, and the build log
// of a creation.
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "chain.hpp"
#include "dispatch.hpp"
#include "kernel_object.hpp"
#include "common/c_boundary.hpp"
#include "compiler/spirv_specialization.hpp"
#include "hal/module_program.hpp"

namespace zehal::ze_driver {
namespace {

// Hands out a build log for `text` through `phBuildLog` when the caller asked for one.
void give_log(ze_module_build_log_handle_t* phBuildLog, std::string text) {
    if (!phBuildLog) return;
    auto log = std::make_shared<BuildLogObject>();
    log->text = std::move(text);
    *phBuildLog = to_handle<ze_module_build_log_handle_t>(build_logs().add(std::move(log)));
}

// What zeModuleCreate does not take: specialization constants of a native module (they are
// SPIR-V's); the reason, or "" when not asked.
std::string unsupported_input(const ze_module_desc_t* desc) {
    if (desc->format == ZE_MODULE_FORMAT_NATIVE && desc->pConstants && desc->pConstants->numConstants > 0)
        return "zehal: specialization constants apply to SPIR-V modules, not native ones";
    return {};
}

// Builds one program on device `d`: `binary` in `format`, specialized with `constants` (may
// be null) and built with `flags` (may be null).
ze_result_t build_program(DeviceObject& d, hal::ModuleFormat format, std::span<const uint8_t> binary, const char* flags,
                          const ze_module_constants_t* constants, hal::ModuleRef* out, std::string* log) {
    std::vector<uint8_t> specialized;
    if (constants && constants->numConstants > 0) {
        if (!constants->pConstantIds || !constants->pConstantValues) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const ze_result_t r = compiler::specialize_spirv(binary, {constants->pConstantIds, constants->numConstants},
                                                         {constants->pConstantValues, constants->numConstants},
                                                         &specialized, log);
        if (r != ZE_RESULT_SUCCESS) return r;
        binary = specialized;
    }
    return d.device->create_module(format, binary, flags ? flags : "", out, log);
}

// The module of several SPIR-V programs (ZE_experimental_module_program): each built as a
// module of its own, then linked to the others (hal::ProgramModule); the log names the
// program whose build failed.
ze_result_t build_programs(DeviceObject& d, const ze_module_program_exp_desc_t& p, hal::ModuleRef* out,
                           std::string* log) {
    if (p.count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (!p.inputSizes || !p.pInputModules) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < p.count; ++i) {
        if (!p.pInputModules[i]) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (p.inputSizes[i] == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    }
    std::vector<hal::ModuleRef> parts(p.count);
    for (uint32_t i = 0; i < p.count; ++i) {
        const ze_result_t r = build_program(d, hal::ModuleFormat::spirv, {p.pInputModules[i], p.inputSizes[i]},
                                            p.pBuildFlags ? p.pBuildFlags[i] : nullptr,
                                            p.pConstants ? p.pConstants[i] : nullptr, &parts[i], log);
        if (r != ZE_RESULT_SUCCESS) {
            *log = "program " + std::to_string(i) + ": " + *log;
            return r;
        }
    }
    return hal::ProgramModule::create(std::move(parts), out, log);
}

// Builds the module on the device's HAL. A build log is handed out whatever the result
// (empty on success when the build said nothing), as the specification allows; a failed
// build sets no module handle. The pointer checks come first, so that a null output leaves
// nothing behind. With a ze_module_program_exp_desc_t in the chain the module is its
// programs (SPIR-V only), and the descriptor's own input is not read.
ze_result_t zeModuleCreate_(ze_context_handle_t hContext, ze_device_handle_t hDevice, const ze_module_desc_t* desc,
                            ze_module_handle_t* phModule, ze_module_build_log_handle_t* phBuildLog) {
    return ze_guarded([&] {
        std::shared_ptr<ContextObject> c;
        if (ze_result_t r = contexts().get(hContext, &c); r != ZE_RESULT_SUCCESS) return r;
        DeviceObject* d = nullptr;
        if (ze_result_t r = device_of(hDevice, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!desc || !phModule) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV && desc->format != ZE_MODULE_FORMAT_NATIVE)
            return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        const auto* program = has_stype(desc, {ZE_STRUCTURE_TYPE_MODULE_DESC})
                                  ? reinterpret_cast<const ze_module_program_exp_desc_t*>(
                                        find_link(desc->pNext, ZE_STRUCTURE_TYPE_MODULE_PROGRAM_EXP_DESC))
                                  : nullptr;
        if (program && desc->format != ZE_MODULE_FORMAT_IL_SPIRV) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
        if (!program && !desc->pInputModule) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        if (!program && desc->inputSize == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
        if (std::string why = unsupported_input(desc); !why.empty()) {
            give_log(phBuildLog, std::move(why));
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        }
        const auto format = desc->format == ZE_MODULE_FORMAT_NATIVE ? hal::ModuleFormat::native
                                                                    : hal::ModuleFormat::spirv;
        std::string log;
        auto object = std::make_shared<ModuleObject>();
        object->device = d;
        const ze_result_t r = program ? build_programs(*d, *program, &object->module, &log)
                                      : build_program(*d, format, {desc->pInputModule, desc->inputSize},
                                                      desc->pBuildFlags, desc->pConstants, &object->module, &log);
        give_log(phBuildLog, std::move(log));
        if (r != ZE_RESULT_SUCCESS) return r;
        *phModule = to_handle<ze_module_handle_t>(modules().add(std::move(object)));
        return ZE_RESULT_SUCCESS;
    });
}

// Kernels keep their module's code alive, so destroying a module with live kernels is safe
// and answers SUCCESS (the specification asks the application not to).
ze_result_t zeModuleDestroy_(ze_module_handle_t hModule) {
    return ze_guarded([&] {
        if (modules().remove(hModule)) return ZE_RESULT_SUCCESS;
        std::shared_ptr<ModuleObject> none;
        return modules().get(hModule, &none);
    });
}

ze_result_t zeModuleBuildLogDestroy_(ze_module_build_log_handle_t hModuleBuildLog) {
    return ze_guarded([&] {
        if (build_logs().remove(hModuleBuildLog)) return ZE_RESULT_SUCCESS;
        std::shared_ptr<BuildLogObject> none;
        return build_logs().get(hModuleBuildLog, &none);
    });
}

ze_result_t zeModuleBuildLogGetString_(ze_module_build_log_handle_t hModuleBuildLog, size_t* pSize, char* pBuildLog) {
    return ze_guarded([&] {
        std::shared_ptr<BuildLogObject> log;
        if (ze_result_t r = build_logs().get(hModuleBuildLog, &log); r != ZE_RESULT_SUCCESS) return r;
        return hand_out_string(log->text, pSize, pBuildLog);
    });
}

// Runs `f` on the module of `hModule`.
template <typename F>
ze_result_t with_module(ze_module_handle_t hModule, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<ModuleObject> m;
        if (ze_result_t r = modules().get(hModule, &m); r != ZE_RESULT_SUCCESS) return r;
        return f(*m);
    });
}

// The size protocol of binaries: no buffer asks the size; a buffer gets the whole binary
// and must hold it (*pSize smaller: INVALID_SIZE, nothing written).
ze_result_t zeModuleGetNativeBinary_(ze_module_handle_t hModule, size_t* pSize, uint8_t* pModuleNativeBinary) {
    return with_module(hModule, [&](ModuleObject& m) {
        if (!pSize) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const std::span<const uint8_t> binary = m.module->native_binary();
        if (!pModuleNativeBinary) {
            *pSize = binary.size();
            return ZE_RESULT_SUCCESS;
        }
        if (*pSize < binary.size()) return ZE_RESULT_ERROR_INVALID_SIZE;
        std::memcpy(pModuleNativeBinary, binary.data(), binary.size());
        *pSize = binary.size();
        return ZE_RESULT_SUCCESS;
    });
}

// The names point into storage of the module that lives as long as the module.
ze_result_t zeModuleGetKernelNames_(ze_module_handle_t hModule, uint32_t* pCount, const char** pNames) {
    return with_module(hModule, [&](ModuleObject& m) {
        if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::call_once(m.names_once, [&] { m.names = m.module->kernel_names(); });
        return hand_out(pCount, pNames != nullptr, static_cast<uint32_t>(m.names.size()),
                        [&](uint32_t i) { pNames[i] = m.names[i].c_str(); });
    });
}

// ZE_MODULE_PROPERTY_FLAG_IMPORTS when the module declares imports, linked or not.
ze_result_t zeModuleGetProperties_(ze_module_handle_t hModule, ze_module_properties_t* pModuleProperties) {
    return with_module(hModule, [&](ModuleObject& m) {
        if (!pModuleProperties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        pModuleProperties->flags = m.module->has_imports() ? ZE_MODULE_PROPERTY_FLAG_IMPORTS : 0;
        return ZE_RESULT_SUCCESS;
    });
}

// The address of a kernel or exported function of the module, where the device's backend
// gives one (docs/kernels.md).
ze_result_t zeModuleGetFunctionPointer_(ze_module_handle_t hModule, const char* pFunctionName, void** pfnFunction) {
    return with_module(hModule, [&](ModuleObject& m) {
        if (!pFunctionName || !pfnFunction) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return m.module->function_pointer(pFunctionName, pfnFunction);
    });
}

// Links the modules on their device's HAL (hal::link_modules). Modules of several devices
// cannot import from each other: MODULE_LINK_FAILURE with a log saying so. The link log is
// handed out whatever the result, as a build log is.
ze_result_t zeModuleDynamicLink_(uint32_t numModules, ze_module_handle_t* phModules,
                                 ze_module_build_log_handle_t* phLinkLog) {
    return ze_guarded([&] {
        if (!phModules && numModules > 0) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<hal::ModuleRef> list;
        list.reserve(numModules);
        const DeviceObject* device = nullptr;
        bool one_device = true;
        for (uint32_t i = 0; i < numModules; ++i) {
            std::shared_ptr<ModuleObject> m;
            if (ze_result_t r = modules().get(phModules[i], &m); r != ZE_RESULT_SUCCESS) return r;
            one_device = one_device && (!device || device == m->device);
            device = m->device;
            list.push_back(m->module);
        }
        if (!one_device) {
            give_log(phLinkLog, "zehal: modules of different devices cannot be linked together");
            return ZE_RESULT_ERROR_MODULE_LINK_FAILURE;
        }
        std::string log;
        const ze_result_t r = hal::link_modules(list, &log);
        give_log(phLinkLog, std::move(log));
        return r;
    });
}

// A program-scope variable as device memory of the module's device, for as long as the
// module lives (docs/kernels.md); the size and the pointer are each optional.
ze_result_t zeModuleGetGlobalPointer_(ze_module_handle_t hModule, const char* pGlobalName, size_t* pSize, void** pptr) {
    return with_module(hModule, [&](ModuleObject& m) {
        if (!pGlobalName) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        return m.module->global_pointer(pGlobalName, pSize, pptr);
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeModuleCreate, zeModuleCreate_),
    ZEHAL_ENTRY(zeModuleDestroy, zeModuleDestroy_),
    ZEHAL_ENTRY(zeModuleBuildLogDestroy, zeModuleBuildLogDestroy_),
    ZEHAL_ENTRY(zeModuleBuildLogGetString, zeModuleBuildLogGetString_),
    ZEHAL_ENTRY(zeModuleGetNativeBinary, zeModuleGetNativeBinary_),
    ZEHAL_ENTRY(zeModuleGetKernelNames, zeModuleGetKernelNames_),
    ZEHAL_ENTRY(zeModuleGetProperties, zeModuleGetProperties_),
    ZEHAL_ENTRY(zeModuleGetFunctionPointer, zeModuleGetFunctionPointer_),
    ZEHAL_ENTRY(zeModuleGetGlobalPointer, zeModuleGetGlobalPointer_),
    ZEHAL_ENTRY(zeModuleDynamicLink, zeModuleDynamicLink_),
};

}  // namespace

std::span<const Entry> module_entries() { return kEntries; }

}  // namespace zehal::ze_driver
