// Whether this build holds the kernel compiler, and why not (set by
// cmake/zehal_compiler.cmake).
#include "compiler/program.hpp"

namespace zehal::compiler {

bool available() noexcept { return unavailable_reason().empty(); }

std::string_view unavailable_reason() noexcept { return ZEHAL_COMPILER_MISSING; }

}  // namespace zehal::compiler
