// zehal's public C++ API: errors. The C++ API is header-only, written over the exported C
// API, so no C++ symbol crosses libzehal.so's boundary (docs/cpp_api.md).
#pragma once

#include <aml.h>
#include <zehal/ze_result.h>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace zehal {

// A failed zehal call: the Level Zero status code and what was being done.
class Error : public std::runtime_error {
public:
    Error(ze_result_t code, const std::string& what)
        : std::runtime_error(what + ": ze_result_t " + hex(code)),
          code_(code) {}
    // The status code (ZE_RESULT_ERROR_*).
    ze_result_t code() const noexcept { return code_; }

private:
    static std::string hex(ze_result_t code) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "0x%x", static_cast<unsigned>(code));
        return buf;
    }
    ze_result_t code_;
};

namespace detail {

// Throws Error unless `r` is ZE_RESULT_SUCCESS.
inline void check(ze_result_t r, const char* what) {
    if (r != ZE_RESULT_SUCCESS) throw Error(r, what);
}

// Throws Error for a negative AML code (-AML_ENOMEM and the others), as the nearest status.
inline void check_aml(int r, const char* what) {
    if (r >= 0) return;
    switch (-r) {
        case AML_ENOMEM:
            throw Error(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY, what);
        case AML_EINVAL:
            throw Error(ZE_RESULT_ERROR_INVALID_ARGUMENT, what);
        case AML_EDOM:
            throw Error(ZE_RESULT_ERROR_OVERLAPPING_REGIONS, what);
        case AML_ENOTSUP:
            throw Error(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, what);
        case AML_EBUSY:
            throw Error(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE, what);
        default:
            throw Error(ZE_RESULT_ERROR_UNKNOWN, what);
    }
}

}  // namespace detail
}  // namespace zehal
