// The C boundary: no C++ exception leaves an extern "C" function of zehal. A C API
// function runs its body through ze_guarded, which turns what escapes into a status code.
#pragma once

#include <new>

#include "zehal/ze_result.h"

namespace zehal {

// Runs `body` (returning ze_result_t) and answers its result; std::bad_alloc becomes
// ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY and any other exception ZE_RESULT_ERROR_UNKNOWN.
template <typename Body>
ze_result_t ze_guarded(Body&& body) noexcept {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    } catch (...) {
        return ZE_RESULT_ERROR_UNKNOWN;
    }
}

}  // namespace zehal
