#include "hal/module_program.hpp"

#include <algorithm>
#include <new>
#include <utility>

namespace zehal::hal {

ze_result_t ProgramModule::create(std::vector<ModuleRef> parts, ModuleRef* out, std::string* log) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (parts.empty()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (ze_result_t r = link_modules(parts, log); r != ZE_RESULT_SUCCESS) return r;
    try {
        *out = std::make_shared<ProgramModule>(std::move(parts));
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

std::vector<std::string> ProgramModule::kernel_names() const {
    std::vector<std::string> names;
    for (const ModuleRef& part : parts_) {
        std::vector<std::string> own = part->kernel_names();
        names.insert(names.end(), own.begin(), own.end());
    }
    return names;
}

ze_result_t ProgramModule::create_kernel(std::string_view name, std::shared_ptr<Kernel>* out) {
    for (const ModuleRef& part : parts_) {
        const ze_result_t r = part->create_kernel(name, out);
        if (r != ZE_RESULT_ERROR_INVALID_KERNEL_NAME) return r;
    }
    return ZE_RESULT_ERROR_INVALID_KERNEL_NAME;
}

ze_result_t ProgramModule::global_pointer(std::string_view name, size_t* size, void** pointer) const {
    for (const ModuleRef& part : parts_) {
        const ze_result_t r = part->global_pointer(name, size, pointer);
        if (r != ZE_RESULT_ERROR_INVALID_GLOBAL_NAME) return r;
    }
    return ZE_RESULT_ERROR_INVALID_GLOBAL_NAME;
}

ze_result_t ProgramModule::function_pointer(std::string_view name, void** pointer) const {
    for (const ModuleRef& part : parts_) {
        const ze_result_t r = part->function_pointer(name, pointer);
        if (r != ZE_RESULT_ERROR_INVALID_FUNCTION_NAME) return r;
    }
    return ZE_RESULT_ERROR_INVALID_FUNCTION_NAME;
}

bool ProgramModule::has_imports() const {
    return std::any_of(parts_.begin(), parts_.end(), [](const ModuleRef& part) { return part->has_imports(); });
}

}  // namespace zehal::hal
