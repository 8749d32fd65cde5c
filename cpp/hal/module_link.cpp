// hal::link_modules: the checks common to every backend, then the backend's Module::link.
#include <algorithm>
#include <new>
#include <vector>

#include "hal/module.hpp"
#include "hal/module_program.hpp"

namespace zehal::hal {

ze_result_t Module::link(std::span<const ModuleRef> modules, std::string* log) {
    const bool imports = std::any_of(modules.begin(), modules.end(),
                                     [](const ModuleRef& m) { return m->has_imports(); });
    if (!imports) return ZE_RESULT_SUCCESS;
    *log = "zehal: this device cannot link modules";
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ze_result_t link_modules(std::span<const ModuleRef> modules, std::string* log) {
    std::string scratch;
    std::string* message = log ? log : &scratch;
    message->clear();
    if (std::any_of(modules.begin(), modules.end(), [](const ModuleRef& m) { return !m; }))
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (modules.empty()) return ZE_RESULT_SUCCESS;
    // A module of several programs takes part as the modules it is made of.
    std::vector<ModuleRef> distinct;
    auto add = [&](const ModuleRef& m) {
        if (std::find(distinct.begin(), distinct.end(), m) == distinct.end()) distinct.push_back(m);
    };
    try {
        for (const ModuleRef& m : modules) {
            if (const auto* program = dynamic_cast<const ProgramModule*>(m.get()))
                std::for_each(program->parts().begin(), program->parts().end(), add);
            else
                add(m);
        }
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return distinct.front()->link(distinct, message);
}

}  // namespace zehal::hal
