// The linkage of a SPIR-V module: the names it exports and imports (LinkageAttributes
// decorations), which zeModuleDynamicLink resolves between modules.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace zehal::compiler {

// The names of a module's functions and variables with Export and with Import linkage, in
// the order the module decorates them. The translator's built-in variables
// (__spirv_BuiltIn*, decorated BuiltIn) are imports of no module and are left out.
struct SpirvLinkage {
    std::vector<std::string> exports;
    std::vector<std::string> imports;
};

// The linkage of `spirv` (a binary that check_spirv accepted; what is not well-formed is
// skipped).
SpirvLinkage read_linkage(std::span<const uint8_t> spirv);

}  // namespace zehal::compiler
