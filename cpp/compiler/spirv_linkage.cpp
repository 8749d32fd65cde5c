// SpirvLinkage from the decorations of a SPIR-V module (spirv_linkage.hpp).
#include "spirv_linkage.hpp"

#include <cstring>
#include <set>

namespace zehal::compiler {
namespace {

// SPIR-V's words (specification 2.3, 3.20, 3.32): the header, OpDecorate, and the
// decorations and linkage types read here.
constexpr uint32_t kMagic = 0x07230203;
constexpr size_t kHeaderWords = 5;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kDecorationBuiltIn = 11;
constexpr uint32_t kDecorationLinkageAttributes = 41;
constexpr uint32_t kLinkageExport = 0;
constexpr uint32_t kLinkageImport = 1;

// A linkage decoration: its target id, name and linkage type.
struct Linkage {
    uint32_t target = 0;
    std::string name;
    uint32_t type = 0;
};

// The literal string at words [at, end) (nul-terminated UTF-8, padded to whole words) and
// the word after it; false when it runs past `end`.
bool read_string(const uint32_t* words, size_t at, size_t end, std::string* out, size_t* next) {
    out->clear();
    for (size_t w = at; w < end; ++w) {
        char bytes[4];
        std::memcpy(bytes, &words[w], 4);
        for (char c : bytes) {
            if (c == '\0') {
                *next = w + 1;
                return true;
            }
            out->push_back(c);
        }
    }
    return false;
}

}  // namespace

SpirvLinkage read_linkage(std::span<const uint8_t> spirv) {
    SpirvLinkage result;
    if (spirv.size() % 4 != 0 || spirv.size() < kHeaderWords * 4) return result;
    std::vector<uint32_t> words(spirv.size() / 4);
    std::memcpy(words.data(), spirv.data(), spirv.size());
    if (words[0] != kMagic) return result;
    std::vector<Linkage> linkages;
    std::set<uint32_t> builtins;
    for (size_t at = kHeaderWords; at < words.size();) {
        const uint32_t count = words[at] >> 16;
        if (count == 0 || count > words.size() - at) break;
        if ((words[at] & 0xFFFF) == kOpDecorate && count >= 3) {
            const uint32_t target = words[at + 1];
            const uint32_t decoration = words[at + 2];
            Linkage l;
            size_t next = 0;
            if (decoration == kDecorationBuiltIn) {
                builtins.insert(target);
            } else if (decoration == kDecorationLinkageAttributes &&
                       read_string(words.data(), at + 3, at + count, &l.name, &next) && next < at + count) {
                l.target = target;
                l.type = words[next];
                linkages.push_back(std::move(l));
            }
        }
        at += count;
    }
    for (Linkage& l : linkages) {
        if (l.type == kLinkageExport) result.exports.push_back(std::move(l.name));
        if (l.type == kLinkageImport && !builtins.count(l.target)) result.imports.push_back(std::move(l.name));
    }
    return result;
}

}  // namespace zehal::compiler
