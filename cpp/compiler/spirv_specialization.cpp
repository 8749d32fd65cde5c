// Specialization constants of SPIR-V: the words of OpSpecConstant* rewritten (spirv_specialization.hpp).
#include "spirv_specialization.hpp"

#include <cstring>
#include <map>

namespace zehal::compiler {
namespace {

// SPIR-V's words (specification 2.3, 3.32): the header, the opcodes and the decoration
// read here.
constexpr uint32_t kMagic = 0x07230203;
constexpr size_t kHeaderWords = 5;
constexpr uint32_t kOpTypeBool = 20;
constexpr uint32_t kOpTypeInt = 21;
constexpr uint32_t kOpTypeFloat = 22;
constexpr uint32_t kOpSpecConstantTrue = 48;
constexpr uint32_t kOpSpecConstantFalse = 49;
constexpr uint32_t kOpSpecConstant = 50;
constexpr uint32_t kOpDecorate = 71;
constexpr uint32_t kDecorationSpecId = 1;

// A scalar type: its width in bits (1 for a boolean), whether it is a signed integer, and
// whether it is a float.
struct Scalar {
    uint32_t bits = 0;
    bool is_signed = false;
    bool is_float = false;
};

// A specialization constant: the word of its instruction and its type's id.
struct SpecConstant {
    size_t at = 0;
    uint32_t type = 0;
};

// What the module declares: scalar types by id, specialization constants by result id, and
// the SpecId of each decorated result id.
struct Declarations {
    std::map<uint32_t, Scalar> types;
    std::map<uint32_t, SpecConstant> constants;
    std::map<uint32_t, uint32_t> spec_ids;
};

// Reads the declarations of `words`; false when an instruction is malformed (a word count
// of 0, past the end, or too short for its opcode).
bool read_declarations(const std::vector<uint32_t>& words, Declarations* out) {
    for (size_t at = kHeaderWords; at < words.size();) {
        const uint32_t count = words[at] >> 16;
        const uint32_t opcode = words[at] & 0xFFFF;
        if (count == 0 || count > words.size() - at) return false;
        const uint32_t* w = &words[at];
        switch (opcode) {
            case kOpTypeBool:
                if (count < 2) return false;
                out->types[w[1]] = {1, false};
                break;
            case kOpTypeInt:
                if (count < 4) return false;
                out->types[w[1]] = {w[2], w[3] != 0};
                break;
            case kOpTypeFloat:
                if (count < 3) return false;
                out->types[w[1]] = {w[2], false, true};
                break;
            case kOpSpecConstantTrue:
            case kOpSpecConstantFalse:
            case kOpSpecConstant:
                if (count < 3) return false;
                out->constants[w[2]] = {at, w[1]};
                break;
            case kOpDecorate:
                if (count >= 4 && w[2] == kDecorationSpecId) out->spec_ids[w[1]] = w[3];
                break;
            default:
                break;
        }
        at += count;
    }
    return true;
}

// Writes `value` (the caller's bytes for a constant of `type`) into the constant at
// words[c.at]: a boolean changes its opcode, a number its literal words.
ze_result_t set_constant(std::vector<uint32_t>& words, const SpecConstant& c, const Scalar& type, const void* value,
                         uint32_t id, std::string* log) {
    const uint32_t opcode = words[c.at] & 0xFFFF;
    const uint32_t count = words[c.at] >> 16;
    if (opcode != kOpSpecConstant) {
        uint8_t truth = 0;
        std::memcpy(&truth, value, 1);
        words[c.at] = (count << 16) | (truth != 0 ? kOpSpecConstantTrue : kOpSpecConstantFalse);
        return ZE_RESULT_SUCCESS;
    }
    const uint32_t bytes = type.bits / 8;
    const uint32_t literal_words = count - 3;
    if ((bytes != 1 && bytes != 2 && bytes != 4 && bytes != 8) || type.bits % 8 != 0 ||
        (bytes + 3) / 4 != literal_words) {
        *log = "zehal: specialization constant " + std::to_string(id) + " has a type of " + std::to_string(type.bits) +
               " bits, which cannot be set";
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    uint64_t bits = 0;
    std::memcpy(&bits, value, bytes);
    // Literals narrower than a word are sign-extended for signed integers, else zero-extended
    // (SPIR-V 2.2.1).
    if (bytes < 4 && type.is_signed) {
        const unsigned shift = 64 - 8 * bytes;
        bits = static_cast<uint64_t>(static_cast<int64_t>(bits << shift) >> shift);
    }
    words[c.at + 3] = static_cast<uint32_t>(bits);
    if (literal_words == 2) words[c.at + 4] = static_cast<uint32_t>(bits >> 32);
    return ZE_RESULT_SUCCESS;
}

// The words of `spirv` and its declarations; false when it is not well-formed SPIR-V.
bool read_module(std::span<const uint8_t> spirv, std::vector<uint32_t>* words, Declarations* declared) {
    words->resize(spirv.size() / 4);
    std::memcpy(words->data(), spirv.data(), words->size() * 4);
    return spirv.size() % 4 == 0 && words->size() >= kHeaderWords && (*words)[0] == kMagic &&
           read_declarations(*words, declared);
}

// SpecId -> the constant's result id.
std::map<uint32_t, uint32_t> spec_constants_of(const Declarations& declared) {
    std::map<uint32_t, uint32_t> result_of;
    for (const auto& [result, spec_id] : declared.spec_ids)
        if (declared.constants.count(result)) result_of[spec_id] = result;
    return result_of;
}

}  // namespace

std::map<uint32_t, SpecConstantType> spec_constant_types(std::span<const uint8_t> spirv) {
    std::vector<uint32_t> words;
    Declarations declared;
    std::map<uint32_t, SpecConstantType> types;
    if (!read_module(spirv, &words, &declared)) return types;
    for (const auto& [spec_id, result] : spec_constants_of(declared)) {
        SpecConstantType t;
        const auto type = declared.types.find(declared.constants.at(result).type);
        if (type != declared.types.end()) {
            const Scalar& scalar = type->second;
            t.kind = scalar.bits == 1 ? SpecConstantType::boolean
                                      : (scalar.is_float ? SpecConstantType::floating : SpecConstantType::integer);
            t.bits = scalar.bits;
            t.is_signed = scalar.is_signed;
        }
        types[spec_id] = t;
    }
    return types;
}

ze_result_t specialize_spirv(std::span<const uint8_t> spirv, std::span<const uint32_t> ids,
                             std::span<const void* const> values, std::vector<uint8_t>* out, std::string* log) {
    out->assign(spirv.begin(), spirv.end());
    for (const void* value : values)
        if (!value) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::vector<uint32_t> words;
    Declarations declared;
    if (!read_module(spirv, &words, &declared)) return ZE_RESULT_SUCCESS;  // not SPIR-V: left to the build
    const std::map<uint32_t, uint32_t> result_of = spec_constants_of(declared);
    for (size_t i = 0; i < ids.size() && i < values.size(); ++i) {
        const auto found = result_of.find(ids[i]);
        if (found == result_of.end()) {
            *log = "zehal: the module has no specialization constant " + std::to_string(ids[i]);
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        const SpecConstant& c = declared.constants.at(found->second);
        const auto type = declared.types.find(c.type);
        if (type == declared.types.end()) {
            *log = "zehal: specialization constant " + std::to_string(ids[i]) + " is not of a scalar type";
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        }
        if (ze_result_t r = set_constant(words, c, type->second, values[i], ids[i], log); r != ZE_RESULT_SUCCESS)
            return r;
    }
    std::memcpy(out->data(), words.data(), words.size() * 4);
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::compiler
