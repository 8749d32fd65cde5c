// The comment lines zehal's PTX begins with (emit_ptx): what a native module built again
// from that PTX must know and PTX has no place for. Written and read here only; no LLVM.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace zehal::compiler {

// The first line: every .entry ends with the three global offset parameters.
inline constexpr std::string_view kPtxGlobalOffsetMarker =
    "// zehal: every .entry ends with three .u32 parameters, the launch's global offset (x, y, z)\n";
// How each line after it that carries a kernel's source attributes begins.
inline constexpr std::string_view kPtxAttributesPrefix = "// zehal: source attributes of ";

// The header for kernels of (name, source attributes), an empty attribute string giving no line.
inline std::string ptx_header(const std::vector<std::pair<std::string, std::string>>& attributes) {
    std::string out(kPtxGlobalOffsetMarker);
    for (const auto& [name, text] : attributes)
        if (!text.empty()) out.append(kPtxAttributesPrefix).append(name).append(": ").append(text).append("\n");
    return out;
}

// Whether `ptx` is zehal's: its entries take the global offset parameters.
inline bool ptx_takes_global_offset(std::string_view ptx) { return ptx.starts_with(kPtxGlobalOffsetMarker); }

// The source attributes zehal's PTX carries in its header, by kernel name; none in other PTX.
inline std::map<std::string, std::string> ptx_source_attributes(std::string_view ptx) {
    std::map<std::string, std::string> out;
    if (!ptx_takes_global_offset(ptx)) return out;
    for (size_t at = kPtxGlobalOffsetMarker.size(); at < ptx.size();) {
        const size_t end = std::min(ptx.find('\n', at), ptx.size());
        const std::string_view line = ptx.substr(at, end - at);
        if (!line.starts_with(kPtxAttributesPrefix)) break;
        const std::string_view rest = line.substr(kPtxAttributesPrefix.size());
        if (const size_t colon = rest.find(": "); colon != std::string_view::npos)
            out.emplace(rest.substr(0, colon), rest.substr(colon + 2));
        at = end + 1;
    }
    return out;
}

}  // namespace zehal::compiler
