/* Status codes: Level Zero's ze_result_t values, shared by every layer below AML.
 *
 * zehal and Level Zero must compile side by side in either include order, so this header
 * never declares a type that <level_zero/ze_api.h> declares as well:
 *  - when Level Zero's header is reachable (the usual case on a machine with Level Zero's
 *    development files), it is included and its ze_result_t is the one used;
 *  - otherwise (no Level Zero headers anywhere on the include path) zehal declares the same
 *    enum, with the same tag and values, so the ABI of zehal's functions is the same both ways.
 * A translation unit that defines ZEHAL_NO_LEVEL_ZERO_HEADERS always takes zehal's copy; it
 * must then not include Level Zero's header after this one. */
#ifndef ZEHAL_ZE_RESULT_H
#define ZEHAL_ZE_RESULT_H

#if !defined(_ZE_API_H) && !defined(ZEHAL_NO_LEVEL_ZERO_HEADERS) && defined(__has_include)
#if __has_include(<level_zero/ze_api.h>)
#include <level_zero/ze_api.h>
#elif __has_include(<ze_api.h>)
#include <ze_api.h>
#endif
#endif

#ifndef _ZE_API_H
/* Result of every HAL and metrics call (values are Level Zero's). */
typedef enum _ze_result_t {
    ZE_RESULT_SUCCESS = 0,
    ZE_RESULT_NOT_READY = 1,
    ZE_RESULT_ERROR_DEVICE_LOST = 0x70000001,
    ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY = 0x70000002,
    ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY = 0x70000003,
    ZE_RESULT_ERROR_MODULE_BUILD_FAILURE = 0x70000004,
    ZE_RESULT_ERROR_MODULE_LINK_FAILURE = 0x70000005,
    ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET = 0x70000006,
    ZE_RESULT_ERROR_DEVICE_IN_LOW_POWER_STATE = 0x70000007,
    ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS = 0x70010000,
    ZE_RESULT_ERROR_NOT_AVAILABLE = 0x70010001,
    ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE = 0x70020000,
    ZE_RESULT_WARNING_DROPPED_DATA = 0x70020001,
    ZE_RESULT_ERROR_UNINITIALIZED = 0x78000001,
    ZE_RESULT_ERROR_UNSUPPORTED_VERSION = 0x78000002,
    ZE_RESULT_ERROR_UNSUPPORTED_FEATURE = 0x78000003,
    ZE_RESULT_ERROR_INVALID_ARGUMENT = 0x78000004,
    ZE_RESULT_ERROR_INVALID_NULL_HANDLE = 0x78000005,
    ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE = 0x78000006,
    ZE_RESULT_ERROR_INVALID_NULL_POINTER = 0x78000007,
    ZE_RESULT_ERROR_INVALID_SIZE = 0x78000008,
    ZE_RESULT_ERROR_UNSUPPORTED_SIZE = 0x78000009,
    ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT = 0x7800000a,
    ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT = 0x7800000b,
    ZE_RESULT_ERROR_INVALID_ENUMERATION = 0x7800000c,
    ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION = 0x7800000d,
    ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT = 0x7800000e,
    ZE_RESULT_ERROR_INVALID_NATIVE_BINARY = 0x7800000f,
    ZE_RESULT_ERROR_INVALID_GLOBAL_NAME = 0x78000010,
    ZE_RESULT_ERROR_INVALID_KERNEL_NAME = 0x78000011,
    ZE_RESULT_ERROR_INVALID_FUNCTION_NAME = 0x78000012,
    ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION = 0x78000013,
    ZE_RESULT_ERROR_INVALID_GLOBAL_WIDTH_DIMENSION = 0x78000014,
    ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX = 0x78000015,
    ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE = 0x78000016,
    ZE_RESULT_ERROR_INVALID_KERNEL_ATTRIBUTE_VALUE = 0x78000017,
    ZE_RESULT_ERROR_INVALID_MODULE_UNLINKED = 0x78000018,
    ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE = 0x78000019,
    ZE_RESULT_ERROR_OVERLAPPING_REGIONS = 0x7800001a,
    ZE_RESULT_ERROR_UNKNOWN = 0x7ffffffe,
    ZE_RESULT_FORCE_UINT32 = 0x7fffffff
} ze_result_t;
#endif

#endif
