// Names of ze_result_t codes, for messages and the Python exceptions.
#pragma once

#include <string_view>

#include "zehal/ze_result.h"

namespace zehal {

// The Level Zero spelling of `r` ("ZE_RESULT_ERROR_INVALID_SIZE"); "ZE_RESULT_UNKNOWN_CODE"
// for a value that is not one of ze_result_t's.
std::string_view result_name(ze_result_t r) noexcept;

// True for SUCCESS, NOT_READY and WARNING_DROPPED_DATA: codes that are not errors.
constexpr bool result_ok(ze_result_t r) noexcept {
    return r == ZE_RESULT_SUCCESS || r == ZE_RESULT_NOT_READY || r == ZE_RESULT_WARNING_DROPPED_DATA;
}

}  // namespace zehal
