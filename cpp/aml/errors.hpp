// AML error codes in C++: the ze_result_t translation table, messages, the thread-local errno.
#pragma once

#include "zehal/ze_result.h"
#include "aml/utils/error.h"

namespace zehal::aml {

// The positive AML code for `r` (contract §2.1's table).
int errno_from_result(ze_result_t r) noexcept;

// Message of a positive AML code; "Unknown error" for anything else. Static storage.
const char* error_message(int code) noexcept;

// The calling thread's aml_errno.
int& thread_errno() noexcept;

// For C functions returning a code: the negative AML code of a failed `r` (0 on SUCCESS).
inline int to_aml(ze_result_t r) noexcept { return -errno_from_result(r); }

}  // namespace zehal::aml
