// AML error codes (SEMANTICS 2.1) as the Python errors need them.
#pragma once

#include "zehal/ze_result.h"

namespace zehal::py::aml {

// Positive AML codes (AML_SUCCESS .. AML_EPERM).
inline constexpr int kSuccess = 0;
inline constexpr int kFailure = 1;
inline constexpr int kEnomem = 2;
inline constexpr int kEinval = 3;
inline constexpr int kEdom = 4;
inline constexpr int kEnotsup = 5;
inline constexpr int kEbusy = 6;
inline constexpr int kEperm = 7;

// The positive AML code a ze_result_t translates to (the table of SEMANTICS 2.1).
constexpr int errno_from_ze_result(ze_result_t r) noexcept {
    switch (r) {
        case ZE_RESULT_SUCCESS:
            return kSuccess;
        case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
        case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
            return kEnomem;
        case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
        case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
        case ZE_RESULT_ERROR_INVALID_ENUMERATION:
        case ZE_RESULT_ERROR_INVALID_ARGUMENT:
        case ZE_RESULT_ERROR_INVALID_SIZE:
        case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
        case ZE_RESULT_ERROR_INVALID_NATIVE_BINARY:
        case ZE_RESULT_ERROR_INVALID_GLOBAL_NAME:
        case ZE_RESULT_ERROR_INVALID_KERNEL_NAME:
        case ZE_RESULT_ERROR_INVALID_FUNCTION_NAME:
        case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION:
        case ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION:
        case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX:
        case ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE:
        case ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE:
        case ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED:
        case ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE:
        case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
            return kEinval;
        case ZE_RESULT_ERROR_OVERLAPPING_REGIONS:
            return kEdom;
        case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
        case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
        case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
        case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
        case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION:
        case ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT:
            return kEnotsup;
        case ZE_RESULT_NOT_READY:
        case ZE_RESULT_ERROR_NOT_AVAILABLE:
        case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
            return kEbusy;
        case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
            return kEperm;
        default:
            return kFailure;
    }
}

}  // namespace zehal::py::aml
