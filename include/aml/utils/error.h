/* AML error codes, the thread-local aml_errno, and their messages.
 * Codes are defined positive and returned negative (-AML_EINVAL); aml_errno holds the
 * positive value of the last failure of the calling thread. */
#ifndef AML_UTILS_ERROR_H
#define AML_UTILS_ERROR_H

#include "zehal/export.h"
#include "zehal/ze_result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define AML_SUCCESS 0   /* no error */
#define AML_FAILURE 1   /* generic error (device lost, backend failure) */
#define AML_ENOMEM 2    /* not enough memory */
#define AML_EINVAL 3    /* invalid argument */
#define AML_EDOM 4      /* value out of bound */
#define AML_ENOTSUP 5   /* operation not supported */
#define AML_EBUSY 6     /* underlying resource not available for the operation */
#define AML_EPERM 7     /* insufficient permissions */
#define AML_ERROR_MAX 8 /* one past the last code */

/* Address of the calling thread's aml_errno. */
ZEHAL_API int* aml_errno_location(void);

/* The calling thread's last AML error (positive code); an lvalue, like errno. */
#define aml_errno (*aml_errno_location())

/* Message of a positive AML code ("Invalid argument"); "Unknown error" for any other value.
 * The string is static. */
ZEHAL_API const char* aml_strerror(const int err);

/* Prints "msg:<aml_strerror(aml_errno)>" and a newline to stderr (only the message when
 * msg is NULL). */
ZEHAL_API void aml_perror(const char* msg);

/* The positive AML code for a Level Zero result:
 * SUCCESS -> AML_SUCCESS; out of host/device memory -> AML_ENOMEM; INVALID_* and
 * DEPENDENCY_UNAVAILABLE -> AML_EINVAL; OVERLAPPING_REGIONS -> AML_EDOM; UNSUPPORTED_* ->
 * AML_ENOTSUP; NOT_READY, NOT_AVAILABLE, HANDLE_OBJECT_IN_USE -> AML_EBUSY;
 * INSUFFICIENT_PERMISSIONS -> AML_EPERM; anything else (device lost, uninitialized,
 * unknown, ...) -> AML_FAILURE. */
ZEHAL_API int aml_errno_from_ze_result(ze_result_t err);

#ifdef __cplusplus
}
#endif

#endif
