// Specialization constants of a SPIR-V module (ze_module_constants_t): the module is
// specialized before it is built by giving each specialization constant named by the caller
// the caller's value as its default, as a SPIR-V consumer applies them. The result is an
// ordinary SPIR-V module, so every device builds and caches it as any other.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "zehal/ze_result.h"

namespace zehal::ze_driver {

// Copies `spirv` into *out with the specialization constant of SpecId ids[i] set to the
// value at values[i] (as many bytes as its type holds: 1 for a boolean, true when not zero;
// 2, 4 or 8 for an integer or a float; a later id repeated wins). SUCCESS; an id that no
// OpSpecConstant, OpSpecConstantTrue or OpSpecConstantFalse of the module has,
// INVALID_ARGUMENT with the reason in `log`; a null value, INVALID_NULL_POINTER. A binary
// that is not well-formed SPIR-V is copied unchanged: its build says what is wrong with it.
ze_result_t specialize_spirv(std::span<const uint8_t> spirv, std::span<const uint32_t> ids,
                             std::span<const void* const> values, std::vector<uint8_t>* out, std::string* log);

}  // namespace zehal::ze_driver
