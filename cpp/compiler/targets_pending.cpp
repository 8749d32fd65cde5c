// Host code and PTX are not built by this revision of the layer yet: both answer
// UNSUPPORTED_FEATURE.
#include "compiler/program.hpp"

namespace zehal::compiler {

ze_result_t HostModule::build(const std::shared_ptr<const Program>&, std::shared_ptr<const HostModule>* out,
                              std::string* log) {
    out->reset();
    *log = "host kernels are not built by this revision";
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ze_result_t emit_ptx(const Program&, uint32_t, std::string*, std::string* log) {
    *log = "PTX is not built by this revision";
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

}  // namespace zehal::compiler
