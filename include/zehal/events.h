/* Events, event pools and the event query kernel timestamps extension: a C API over
 * zehal's HAL, in the style of Level Zero (zeEventPoolCreate, zeEventCreate,
 * zeEventHostSynchronize, zeEventQueryKernelTimestampsExt, zeDeviceGetGlobalTimestamps).
 * Every function is thread-safe. A destroyed handle answers
 * ZE_RESULT_ERROR_INVALID_NULL_HANDLE; once its device is lost, calls answer
 * ZE_RESULT_ERROR_DEVICE_LOST. */
#ifndef ZEHAL_EVENTS_H
#define ZEHAL_EVENTS_H

#include <stdint.h>

#include "zehal/device.h"
#include "zehal/ze_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device timestamp capabilities (ze_event_query_kernel_timestamps_ext_flags_t). */
#define ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_KERNEL (1u << 0)       /* kernel timestamps in ticks */
#define ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_SYNCHRONIZED (1u << 1) /* mapped to host ns */

/* Event pool flags (ze_event_pool_flags_t). */
#define ZEHAL_EVENT_POOL_FLAG_HOST_VISIBLE (1u << 0)            /* events visible to the host */
#define ZEHAL_EVENT_POOL_FLAG_IPC (1u << 1)                     /* shareable between processes */
#define ZEHAL_EVENT_POOL_FLAG_KERNEL_TIMESTAMP (1u << 2)        /* record kernel timestamps */
#define ZEHAL_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP (1u << 3) /* ... and synchronized ones */

/* Timeout of zehal_event_host_synchronize meaning "no limit". */
#define ZEHAL_TIMEOUT_INFINITE UINT64_MAX

/* A pool of events. */
typedef struct zehal_event_pool* zehal_event_pool_t;
/* One event of a pool. */
typedef struct zehal_event* zehal_event_t;

/* Timestamp capabilities of a device (ze_event_query_kernel_timestamps_ext_properties_t
 * and the timer fields of ze_device_properties_t). */
typedef struct zehal_device_timestamp_properties {
    uint32_t flags;                       /* ZEHAL_EVENT_QUERY_KERNEL_TIMESTAMPS_FLAG_* bits */
    uint32_t kernel_timestamp_valid_bits; /* valid bits of kernel timestamps */
    uint32_t timestamp_valid_bits;        /* valid bits of global timestamps */
    uint32_t reserved;                    /* zero */
    uint64_t timer_resolution_hz;         /* device clock frequency: ns = ticks * 1e9 / hz */
} zehal_device_timestamp_properties_t;

/* Start and end of one packet in one domain (ze_kernel_timestamp_data_t). */
typedef struct zehal_kernel_timestamp_data {
    uint64_t kernel_start; /* start */
    uint64_t kernel_end;   /* end */
} zehal_kernel_timestamp_data_t;

/* One packet of a kernel timestamp query (ze_kernel_timestamp_result_t). */
typedef struct zehal_kernel_timestamp_result {
    zehal_kernel_timestamp_data_t global;  /* wall time of the device */
    zehal_kernel_timestamp_data_t context; /* time the command's context was active */
} zehal_kernel_timestamp_result_t;

/* Destinations of zehal_event_query_kernel_timestamps_ext
 * (ze_event_query_kernel_timestamps_results_ext_properties_t). */
typedef struct zehal_event_query_kernel_timestamps_results {
    zehal_kernel_timestamp_result_t* kernel_timestamps;       /* [out][optional] device ticks */
    zehal_kernel_timestamp_result_t* synchronized_timestamps; /* [out][optional] host ns */
} zehal_event_query_kernel_timestamps_results_t;

/* Timestamp capabilities of `device`.
 * device      [in] the device
 * properties  [out] its capabilities
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE (device NULL); INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_device_get_timestamp_properties(zehal_device_t device,
                                                            zehal_device_timestamp_properties_t* properties);

/* Host and device clocks read together.
 * device            [in] the device
 * host_timestamp    [out] host ns of CLOCK_MONOTONIC_RAW
 * device_timestamp  [out] device ticks at that instant (timestamp_valid_bits valid)
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_device_get_global_timestamps(zehal_device_t device, uint64_t* host_timestamp,
                                                         uint64_t* device_timestamp);

/* Creates a pool of events.
 * device  [in] the device whose commands signal them
 * flags   [in] ZEHAL_EVENT_POOL_FLAG_* bits
 * count   [in] number of events (> 0)
 * pool    [out] the pool
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_SIZE (count
 * 0); UNSUPPORTED_SIZE (count too large); INVALID_ENUMERATION (unknown flags);
 * UNSUPPORTED_FEATURE (a timestamp flag the device cannot honour); DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_event_pool_create(zehal_device_t device, uint32_t flags, uint32_t count,
                                              zehal_event_pool_t* pool);

/* Destroys a pool whose events were all destroyed.
 * pool  [in][release] the pool
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE (NULL or destroyed);
 * HANDLE_OBJECT_IN_USE (events of the pool are not destroyed yet). */
ZEHAL_API ze_result_t zehal_event_pool_destroy(zehal_event_pool_t pool);

/* Creates a handle on event `index` of `pool`.
 * pool   [in] the pool
 * index  [in] index of the event (< count)
 * event  [out] the event
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_ARGUMENT
 * (index out of range); DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_event_create(zehal_event_pool_t pool, uint32_t index, zehal_event_t* event);

/* Destroys an event handle (a command still to signal it keeps what it needs).
 * event  [in][release] the event
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE (NULL or destroyed). */
ZEHAL_API ze_result_t zehal_event_destroy(zehal_event_t event);

/* ZE_RESULT_SUCCESS once signalled, ZE_RESULT_NOT_READY before; INVALID_NULL_HANDLE;
 * DEVICE_LOST.
 * event  [in] the event */
ZEHAL_API ze_result_t zehal_event_query_status(zehal_event_t event);

/* Waits until the event is signalled or `timeout_ns` passed.
 * event       [in] the event
 * timeout_ns  [in] ns to wait; 0 queries; ZEHAL_TIMEOUT_INFINITE waits without limit
 * Returns ZE_RESULT_SUCCESS; NOT_READY (timed out); INVALID_NULL_HANDLE; DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_event_host_synchronize(zehal_event_t event, uint64_t timeout_ns);

/* Signals the event from the host (a timestamp event records one packet at this instant).
 * event  [in] the event
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_event_host_signal(zehal_event_t event);

/* Returns the event to "not signalled" and clears its timestamps.
 * event  [in] the event
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_event_host_reset(zehal_event_t event);

/* Kernel timestamps of the command that signalled the event, one result per packet
 * (zeEventQueryKernelTimestampsExt).
 * event    [in] an event of a KERNEL_TIMESTAMP or KERNEL_MAPPED_TIMESTAMP pool
 * count    [in,out] 0: set to the number of packets; n: at most n packets are written and
 *          count is set to the number written (a larger n is corrected)
 * results  [in][optional when *count is 0] where to write: kernel timestamps in device
 *          ticks, synchronized timestamps in host ns (needs a KERNEL_MAPPED_TIMESTAMP pool);
 *          either pointer may be NULL, not both
 * Returns ZE_RESULT_SUCCESS; NOT_READY (not signalled: nothing written); INVALID_NULL_HANDLE;
 * INVALID_NULL_POINTER; UNSUPPORTED_FEATURE (the pool lacks the timestamp flag needed);
 * DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_event_query_kernel_timestamps_ext(zehal_event_t event, uint32_t* count,
                                                              zehal_event_query_kernel_timestamps_results_t* results);

#ifdef __cplusplus
}
#endif

#endif
