// Specialization constants of a SPIR-V module (ze_module_constants_t): the module is
// specialized before it is built by giving each specialization constant named by the caller
// the caller's value as its default, as a SPIR-V consumer applies them. The result is an
// ordinary SPIR-V module, so every device builds and caches it as any other.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "zehal/ze_result.h"

namespace zehal::compiler {

// Copies `spirv` into *out with the specialization constant of SpecId ids[i] set to the
// value at values[i] (as many bytes as its type holds: 1 for a boolean, true when not zero;
// 2, 4 or 8 for an integer or a float; a later id repeated wins). SUCCESS; an id that no
// OpSpecConstant, OpSpecConstantTrue or OpSpecConstantFalse of the module has,
// INVALID_ARGUMENT with the reason in `log`; a null value, INVALID_NULL_POINTER. A binary
// that is not well-formed SPIR-V is copied unchanged: its build says what is wrong with it.
ze_result_t specialize_spirv(std::span<const uint8_t> spirv, std::span<const uint32_t> ids,
                             std::span<const void* const> values, std::vector<uint8_t>* out, std::string* log);

// The type of a specialization constant, which says how its value's bytes are read.
struct SpecConstantType {
    enum Kind : uint32_t { boolean, integer, floating, other } kind = other;
    uint32_t bits = 0;       // 1 for a boolean
    bool is_signed = false;  // a signed integer
};
// The specialization constants of `spirv` by SpecId (empty for a binary that is not
// well-formed SPIR-V): for callers that hold values rather than bytes (Python), to lay
// them out as specialize_spirv reads them.
std::map<uint32_t, SpecConstantType> spec_constant_types(std::span<const uint8_t> spirv);

}  // namespace zehal::compiler
