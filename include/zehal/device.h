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

/* Longest device name, terminating zero included. */
#define ZEHAL_MAX_DEVICE_NAME 256
/* Longest backend name, terminating zero included. */
#define ZEHAL_MAX_BACKEND_NAME 32
/* Longest reason a backend is not available, terminating zero included. */
#define ZEHAL_MAX_BACKEND_REASON 256

/* What a device is (ze_device_properties_t's fields that zehal's devices have). */
typedef struct zehal_device_properties {
    char name[ZEHAL_MAX_DEVICE_NAME];     /* e.g. "zehal sim device 0" */
    char backend[ZEHAL_MAX_BACKEND_NAME]; /* "sim", "cuda" or "level_zero" */
    uint8_t uuid[16];                     /* unique per device */
    uint64_t memory_bytes;                /* device memory capacity */
    uint64_t max_allocation_bytes;        /* largest single allocation */
    uint64_t timer_hz;                    /* device clock: ns = ticks * 1e9 / timer_hz */
    uint32_t kernel_timestamp_valid_bits; /* valid bits of kernel timestamps */
    uint32_t timestamp_valid_bits;        /* valid bits of global timestamps */
    uint32_t compute_engines;             /* engines of ordinal 0 */
    uint32_t copy_engines;                /* engines of ordinal 1 */
    uint32_t subdevices;                  /* 0: no sub-devices */
    uint32_t timestamp_flags;             /* ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_* bits */
    uint8_t dma_buf_export;               /* 1 when metric export memory is supported */
    uint8_t tracer;                       /* 1 when the device has a metric tracer */
} zehal_device_properties_t;

/* Number of devices of a backend.
 * backend  [in][optional] "sim", "cuda" or "level_zero"; NULL: the default backend
 * count    [out] its number of devices
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_POINTER (count NULL); INVALID_ARGUMENT for an
 * unknown backend; DEPENDENCY_UNAVAILABLE for a backend not available here. */
ZEHAL_API ze_result_t zehal_device_count(const char* backend, uint32_t* count);

/* Properties of a device.
 * device      [in] the device
 * properties  [out] what it is
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE (device NULL); INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_device_get_properties(zehal_device_t device, zehal_device_properties_t* properties);

/* How one device reaches another's memory (ze_device_p2p_properties_t and the bandwidth of
 * ze_device_p2p_bandwidth_exp_properties_t). */
typedef struct zehal_peer_properties {
    uint8_t access;                 /* 1 when the device's engines touch the peer's memory directly */
    uint8_t atomics;                /* 1 when atomics on the peer's memory are coherent */
    uint64_t bandwidth_bytes_per_s; /* the link's bandwidth; 0 when unknown or unthrottled */
} zehal_peer_properties_t;

/* Whether `device` accesses `peer`'s device memory directly (zeDeviceCanAccessPeer). Copies
 * between two devices of one backend run either way (staged where there is no access).
 * device  [in] the device
 * peer    [in] the device whose memory it would touch (may be `device`)
 * value   [out] 1 when it can, else 0
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE (device or peer NULL); INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_device_can_access_peer(zehal_device_t device, zehal_device_t peer, uint8_t* value);

/* How `device` reaches `peer`'s memory (zeDeviceGetP2PProperties).
 * device      [in] the device
 * peer        [in] the peer
 * properties  [out] access, atomics, link bandwidth
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; DEVICE_LOST when
 * either device is lost. */
ZEHAL_API ze_result_t zehal_device_get_peer_properties(zehal_device_t device, zehal_device_t peer,
                                                       zehal_peer_properties_t* properties);

/* What probing one backend found. */
typedef struct zehal_backend_properties {
    char name[ZEHAL_MAX_BACKEND_NAME];     /* "level_zero", "cuda" or "sim" */
    char reason[ZEHAL_MAX_BACKEND_REASON]; /* why it is not available; "" when it is */
    uint8_t available;                     /* 1 when usable here */
    uint32_t device_count;                 /* its devices; 0 when not available */
} zehal_backend_properties_t;

/* The known backends, available or not, in registry order (level_zero, cuda, sim).
 * count     [in,out] 0: set to the number of backends; n: at most n entries are written
 *           and *count is set to the number written
 * backends  [out][optional when *count is 0] the backends
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_POINTER (count NULL, or backends NULL with
 * *count > 0). */
ZEHAL_API ze_result_t zehal_backend_get(uint32_t* count, zehal_backend_properties_t* backends);

/* Name of the default backend (ZEHAL_BACKEND when set, else the first available one with a
 * device).
 * name  [out] its name, zero-terminated
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_POINTER (name NULL); INVALID_ARGUMENT or
 * DEPENDENCY_UNAVAILABLE when ZEHAL_BACKEND names an unknown or unavailable backend;
 * UNINITIALIZED when no backend has a device. */
ZEHAL_API ze_result_t zehal_backend_get_default(char name[ZEHAL_MAX_BACKEND_NAME]);

#ifdef __cplusplus
}
#endif

#endif
