// The compiler layer of a build without LLVM, the SPIRV-LLVM-Translator or libclc: every
// build answers UNSUPPORTED_FEATURE, with unavailable_reason() in the log.
#include "compiler/program.hpp"

namespace zehal::compiler {

namespace {

ze_result_t unsupported(std::string* log) {
    if (log != nullptr) {
        *log = "kernels are unavailable: ";
        log->append(unavailable_reason());
    }
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

}  // namespace

ze_result_t Program::from_spirv(std::span<const uint8_t>, std::string_view, std::shared_ptr<const Program>* out,
                                std::string* log) {
    if (out != nullptr) {
        out->reset();
    }
    return unsupported(log);
}

ze_result_t HostModule::build(const std::shared_ptr<const Program>&, std::shared_ptr<const HostModule>* out,
                              std::string* log) {
    if (out != nullptr) {
        out->reset();
    }
    return unsupported(log);
}

ze_result_t HostModule::link(const std::shared_ptr<const Program>&, std::span<const LinkSource>,
                             std::shared_ptr<const HostModule>* out, std::vector<size_t>*, std::string* log) {
    if (out != nullptr) {
        out->reset();
    }
    return unsupported(log);
}

ze_result_t emit_ptx(const Program&, uint32_t, std::string* ptx, std::string* log) {
    if (ptx != nullptr) {
        ptx->clear();
    }
    return unsupported(log);
}

}  // namespace zehal::compiler
