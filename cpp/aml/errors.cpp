#include "aml/errors.hpp"

namespace zehal::aml {

int errno_from_result(ze_result_t r) noexcept {
    switch (r) {
        case ZE_RESULT_SUCCESS:
            return AML_SUCCESS;
        case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY:
        case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY:
            return AML_ENOMEM;
        case ZE_RESULT_ERROR_INVALID_ARGUMENT:
        case ZE_RESULT_ERROR_INVALID_NULL_HANDLE:
        case ZE_RESULT_ERROR_INVALID_NULL_POINTER:
        case ZE_RESULT_ERROR_INVALID_SIZE:
        case ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT:
        case ZE_RESULT_ERROR_INVALID_ENUMERATION:
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
            return AML_EINVAL;
        case ZE_RESULT_ERROR_OVERLAPPING_REGIONS:
            return AML_EDOM;
        case ZE_RESULT_ERROR_UNSUPPORTED_VERSION:
        case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
        case ZE_RESULT_ERROR_UNSUPPORTED_SIZE:
        case ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT:
        case ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION:
        case ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT:
            return AML_ENOTSUP;
        case ZE_RESULT_NOT_READY:
        case ZE_RESULT_ERROR_NOT_AVAILABLE:
        case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
            return AML_EBUSY;
        case ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS:
            return AML_EPERM;
        default:
            // UNINITIALIZED, DEVICE_LOST, MODULE_BUILD/LINK_FAILURE, UNKNOWN and anything else.
            return AML_FAILURE;
    }
}

const char* error_message(int code) noexcept {
    switch (code) {
        case AML_SUCCESS:
            return "Success";
        case AML_FAILURE:
            return "Generic error";
        case AML_ENOMEM:
            return "Not enough memory";
        case AML_EINVAL:
            return "Invalid argument";
        case AML_EDOM:
            return "Value out of bound";
        case AML_ENOTSUP:
            return "Operation not supported";
        case AML_EBUSY:
            return "Underlying resource is not available for operation";
        case AML_EPERM:
            return "Insufficient permissions";
        default:
            return "Unknown error";
    }
}

int& thread_errno() noexcept {
    thread_local int value = AML_SUCCESS;
    return value;
}

}  // namespace zehal::aml
