/* C handle of a zehal device, for the AML C API and the extension C headers. */
#ifndef ZEHAL_DEVICE_H
#define ZEHAL_DEVICE_H

#include <stdint.h>

#include "zehal/export.h"
#include "zehal/ze_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A device of some backend; owned by zehal, valid until the process exits. */
typedef struct zehal_device* zehal_device_t;

/* Device `index` of backend `backend` ("sim", "cuda", "level_zero"; NULL: the default
 * backend) into *device.
 * Returns ZE_RESULT_SUCCESS; ZE_RESULT_ERROR_INVALID_NULL_POINTER when device is NULL;
 * ZE_RESULT_ERROR_INVALID_ARGUMENT for an unknown backend or an index past its devices;
 * ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE for a backend not available here. */
ZEHAL_API ze_result_t zehal_device_get(const char* backend, uint32_t index, zehal_device_t* device);

#ifdef __cplusplus
}
#endif

#endif
