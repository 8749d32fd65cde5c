/* Tracer-based metrics and metric export memory: a C API over zehal's metrics layer, in
 * the style of Level Zero's experimental metric tracer (zetMetricTracerCreateExp,
 * zetMetricTracerReadDataExp, zetMetricDecoderCreateExp, zetMetricTracerDecodeExp) and
 * metric export memory (zet_export_dma_buf_exp_properties_t).
 * Every function is thread-safe. A destroyed tracer or decoder handle answers
 * ZE_RESULT_ERROR_INVALID_NULL_HANDLE; a handle zehal never gave out answers
 * ZE_RESULT_ERROR_INVALID_ARGUMENT. Group and metric handles live as long as their device. */
#ifndef ZEHAL_METRICS_H
#define ZEHAL_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "zehal/device.h"
#include "zehal/events.h"
#include "zehal/ze_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sampling types of a metric group (zet_metric_group_sampling_type_flags_t). */
#define ZEHAL_METRIC_SAMPLING_TYPE_EVENT_BASED (1u << 0)  /* queries */
#define ZEHAL_METRIC_SAMPLING_TYPE_TIME_BASED (1u << 1)   /* streamers */
#define ZEHAL_METRIC_SAMPLING_TYPE_TRACER_BASED (1u << 2) /* tracers */

/* Metric group type flags (zet_metric_group_type_exp_flags_t). */
#define ZEHAL_METRIC_GROUP_TYPE_EXPORT_DMA_BUF (1u << 0) /* memory exportable as a dma-buf */
#define ZEHAL_METRIC_GROUP_TYPE_USER_CREATED (1u << 1)   /* made by the user */
#define ZEHAL_METRIC_GROUP_TYPE_OTHER (1u << 2)          /* none of the others */
#define ZEHAL_METRIC_GROUP_TYPE_MARKER (1u << 3)         /* generates markers */

/* Result types of metric values (zet_value_type_t). */
#define ZEHAL_METRIC_VALUE_TYPE_UINT32 0
#define ZEHAL_METRIC_VALUE_TYPE_UINT64 1
#define ZEHAL_METRIC_VALUE_TYPE_FLOAT32 2
#define ZEHAL_METRIC_VALUE_TYPE_FLOAT64 3
#define ZEHAL_METRIC_VALUE_TYPE_BOOL8 4

/* Metric types (zet_metric_type_t; experimental values of headers >= 1.11.5). */
#define ZEHAL_METRIC_TYPE_DURATION 0
#define ZEHAL_METRIC_TYPE_EVENT 1
#define ZEHAL_METRIC_TYPE_EVENT_WITH_RANGE 2
#define ZEHAL_METRIC_TYPE_THROUGHPUT 3
#define ZEHAL_METRIC_TYPE_TIMESTAMP 4
#define ZEHAL_METRIC_TYPE_FLAG 5
#define ZEHAL_METRIC_TYPE_RATIO 6
#define ZEHAL_METRIC_TYPE_RAW 7
#define ZEHAL_METRIC_TYPE_EVENT_EXP_TIMESTAMP 0x7ffffff9u
#define ZEHAL_METRIC_TYPE_EVENT_EXP_START 0x7ffffffau
#define ZEHAL_METRIC_TYPE_EVENT_EXP_END 0x7ffffffbu
#define ZEHAL_METRIC_TYPE_EVENT_EXP_MONOTONIC_WRAPS_VALUE 0x7ffffffcu
#define ZEHAL_METRIC_TYPE_EXP_EXPORT_DMA_BUF 0x7ffffffdu
#define ZEHAL_METRIC_TYPE_IP_EXP 0x7ffffffeu

/* Raw data, version 1: little-endian records, each starting with uint16 kind, uint16 size. */
#define ZEHAL_METRIC_RECORD_SAMPLE 1       /* a metric sample */
#define ZEHAL_METRIC_RECORD_ENABLE 2       /* the tracer was enabled */
#define ZEHAL_METRIC_RECORD_DISABLE 3      /* the tracer was disabled */
#define ZEHAL_METRIC_RECORD_DROPPED 4      /* value = records lost here */
#define ZEHAL_METRIC_RECORD_CLOCK_SYNC 5   /* value = host ns at ticks */
#define ZEHAL_METRIC_RECORD_EXPORT_WRITE 6 /* value = first 32-bit word written */
#define ZEHAL_METRIC_RECORD_SIZE 32        /* bytes of a version-1 record */

/* Sizes of the strings of the properties below (with their NUL). */
#define ZEHAL_MAX_METRIC_STRING 256

/* A metric group of a device. */
typedef struct zehal_metric_group* zehal_metric_group_t;
/* A metric of a group. */
typedef struct zehal_metric* zehal_metric_t;
/* A tracer: drains a device's asynchronous metric events into raw data. */
typedef struct zehal_metric_tracer* zehal_metric_tracer_t;
/* A decoder: turns a tracer's raw data into metric entries. */
typedef struct zehal_metric_decoder* zehal_metric_decoder_t;

/* What a metric group is (zet_metric_group_properties_t, zet_metric_group_type_exp_t). */
typedef struct zehal_metric_group_properties {
    char name[ZEHAL_MAX_METRIC_STRING];        /* short name */
    char description[ZEHAL_MAX_METRIC_STRING]; /* what it measures */
    uint32_t sampling_types;                   /* ZEHAL_METRIC_SAMPLING_TYPE_* bits */
    uint32_t type_flags;                       /* ZEHAL_METRIC_GROUP_TYPE_* bits */
    uint32_t domain;                           /* one active group per domain */
    uint32_t metric_count;                     /* metrics in the group */
} zehal_metric_group_properties_t;

/* What a metric is (zet_metric_properties_t). */
typedef struct zehal_metric_properties {
    char name[ZEHAL_MAX_METRIC_STRING];        /* short name */
    char description[ZEHAL_MAX_METRIC_STRING]; /* what it measures */
    char component[ZEHAL_MAX_METRIC_STRING];   /* the part of the device it belongs to */
    uint32_t tier;                             /* tier */
    uint32_t metric_type;                      /* ZEHAL_METRIC_TYPE_* */
    uint32_t result_type;                      /* ZEHAL_METRIC_VALUE_TYPE_* */
    char units[ZEHAL_MAX_METRIC_STRING];       /* units of the value ("" when none) */
} zehal_metric_properties_t;

/* One decoded entry (zet_metric_entry_exp_t). */
typedef struct zehal_metric_entry {
    uint64_t value;        /* raw bits, typed by the metric's result type */
    uint64_t timestamp;    /* host ns of CLOCK_MONOTONIC_RAW */
    uint32_t metric_index; /* index in the metrics passed to zehal_metric_tracer_decode */
    uint8_t on_subdevice;  /* 1 when made on a sub-device */
    uint32_t subdevice_id; /* that sub-device (its set index), else 0 */
} zehal_metric_entry_t;

/* The metric groups of a device (zetMetricGroupGet).
 * device  [in] the device
 * count   [in,out] 0: set to the number of groups; n: at most n handles are written and
 *         count is set to the number written
 * groups  [out][optional when *count is 0] the groups
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_metric_group_get(zehal_device_t device, uint32_t* count, zehal_metric_group_t* groups);

/* Properties of a group.
 * group       [in] the group
 * properties  [out] its properties
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_ARGUMENT
 * (not a group handle). */
ZEHAL_API ze_result_t zehal_metric_group_get_properties(zehal_metric_group_t group,
                                                        zehal_metric_group_properties_t* properties);

/* The metrics of a group (zetMetricGet).
 * group    [in] the group
 * count    [in,out] as for zehal_metric_group_get
 * metrics  [out][optional when *count is 0] the metrics
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_ARGUMENT. */
ZEHAL_API ze_result_t zehal_metric_get(zehal_metric_group_t group, uint32_t* count, zehal_metric_t* metrics);

/* Properties of a metric.
 * metric      [in] the metric
 * properties  [out] its properties
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_ARGUMENT. */
ZEHAL_API ze_result_t zehal_metric_get_properties(zehal_metric_t metric, zehal_metric_properties_t* properties);

/* Activates groups on a device, replacing the previous set (zetContextActivateMetricGroups).
 * device  [in] the device
 * count   [in] number of groups; 0 deactivates every group
 * groups  [in][range(0, count)] groups of that device, at most one per domain
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER (groups NULL with
 * count > 0); INVALID_ARGUMENT (a group of another device, two of one domain). */
ZEHAL_API ze_result_t zehal_device_activate_metric_groups(zehal_device_t device, uint32_t count,
                                                          zehal_metric_group_t* groups);

/* The exported memory of a group whose type has ZEHAL_METRIC_GROUP_TYPE_EXPORT_DMA_BUF
 * (zet_export_dma_buf_exp_properties_t). The fd belongs to the group: do not close it; dup
 * it to keep it. Import it as device memory to write into it.
 * group  [in] the group
 * fd     [out] dma-buf file descriptor (>= 0)
 * size   [out] bytes (> 0)
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_ARGUMENT
 * (group without the flag); DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_metric_group_get_export_dma_buf(zehal_metric_group_t group, int* fd, size_t* size);

/* The same through a metric of type ZEHAL_METRIC_TYPE_EXP_EXPORT_DMA_BUF.
 * metric  [in] the metric
 * fd      [out] dma-buf file descriptor of its group
 * size    [out] bytes
 * Returns as above; INVALID_ARGUMENT for a metric of another type. */
ZEHAL_API ze_result_t zehal_metric_get_export_dma_buf(zehal_metric_t metric, int* fd, size_t* size);

/* Creates a tracer, disabled (zetMetricTracerCreateExp). One tracer per device.
 * device                [in] the device
 * group_count           [in] number of groups (> 0)
 * groups                [in][range(0, group_count)] activated tracer-based groups
 * notify_every_n_bytes  [in,out] bytes after which `notification` is signalled: rounded up
 *                       to whole records, clamped to the tracer's buffer, 0 replaced by a
 *                       default; the value used is written back
 * notification          [in][optional] an event of a HOST_VISIBLE pool, signalled once at
 *                       least *notify_every_n_bytes can be read
 * tracer                [out] the tracer
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_SIZE
 * (group_count 0); INVALID_ARGUMENT (a group not tracer-based, of another device or given
 * twice; a notification event not host-visible); NOT_READY (a group not activated);
 * HANDLE_OBJECT_IN_USE (the device has a tracer); UNSUPPORTED_FEATURE (no tracer here). */
ZEHAL_API ze_result_t zehal_metric_tracer_create(zehal_device_t device, uint32_t group_count,
                                                 zehal_metric_group_t* groups, uint32_t* notify_every_n_bytes,
                                                 zehal_event_t notification, zehal_metric_tracer_t* tracer);

/* Destroys a disabled tracer (zetMetricTracerDestroyExp).
 * tracer  [in][release] the tracer
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE (NULL or destroyed); HANDLE_OBJECT_IN_USE
 * (still enabled). */
ZEHAL_API ze_result_t zehal_metric_tracer_destroy(zehal_metric_tracer_t tracer);

/* Starts collecting (zetMetricTracerEnableExp); adds an enable record to the data.
 * tracer       [in] the tracer
 * synchronous  [in] non-zero: returns once enabled; zero: returns at once
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; DEVICE_LOST. */
ZEHAL_API ze_result_t zehal_metric_tracer_enable(zehal_metric_tracer_t tracer, uint8_t synchronous);

/* Stops collecting (zetMetricTracerDisableExp); adds a disable record; the data gathered
 * stays readable.
 * tracer       [in] the tracer
 * synchronous  [in] non-zero: returns once disabled and drained into the tracer's buffer
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE. */
ZEHAL_API ze_result_t zehal_metric_tracer_disable(zehal_metric_tracer_t tracer, uint8_t synchronous);

/* Reads raw data, whole records only (zetMetricTracerReadDataExp).
 * tracer    [in] the tracer
 * raw_size  [in,out] 0: set to the bytes available, nothing copied; n: at most n bytes of
 *           whole records are copied and raw_size is set to the bytes written
 * raw       [out][optional when *raw_size is 0] where to copy
 * Returns ZE_RESULT_SUCCESS; NOT_READY (never enabled, or disabled with nothing left;
 * raw_size 0); WARNING_DROPPED_DATA (records were lost since the last read; the data is
 * returned all the same); INVALID_NULL_HANDLE; INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_metric_tracer_read_data(zehal_metric_tracer_t tracer, size_t* raw_size, uint8_t* raw);

/* Records the tracer lost so far (in the device's buffer and its own).
 * tracer   [in] the tracer
 * dropped  [out] the count
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_metric_tracer_get_dropped(zehal_metric_tracer_t tracer, uint64_t* dropped);

/* Creates a decoder of a tracer's raw data; it stays usable after the tracer is destroyed
 * (zetMetricDecoderCreateExp).
 * tracer   [in] the tracer
 * decoder  [out] the decoder
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_metric_decoder_create(zehal_metric_tracer_t tracer, zehal_metric_decoder_t* decoder);

/* Destroys a decoder (zetMetricDecoderDestroyExp).
 * decoder  [in][release] the decoder
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE (NULL or destroyed). */
ZEHAL_API ze_result_t zehal_metric_decoder_destroy(zehal_metric_decoder_t decoder);

/* Metrics the raw data refers to (zetMetricDecoderGetDecodableMetricsExp).
 * decoder  [in] the decoder
 * count    [in,out] 0: set to the total; smaller: the first *count; larger: corrected to
 *          the total, extra slots untouched
 * metrics  [out][optional when *count is 0] the metrics
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER. */
ZEHAL_API ze_result_t zehal_metric_decoder_get_decodable_metrics(zehal_metric_decoder_t decoder, uint32_t* count,
                                                                 zehal_metric_t* metrics);

/* Decodes raw data into entries, in sets: one per sub-device, one on a device without
 * sub-devices (zetMetricTracerDecodeExp).
 * decoder           [in] the decoder
 * raw_size          [in,out] bytes of raw (0: no data, no entries); when decoding, set to
 *                   the bytes consumed (decode the rest from there)
 * raw               [in][optional when *raw_size is 0] raw data from
 *                   zehal_metric_tracer_read_data
 * metric_count      [in] number of metrics; 0: every decodable metric
 * metrics           [in][range(0, metric_count)] decodable metrics, each once; an entry's
 *                   metric_index is the position of its metric here
 * set_count         [in,out] 0: set to the number of sets (counting); else corrected
 *                   down to it
 * entries_per_set   [out][optional][range(0, *set_count)] entries of each set
 * entry_count       [in,out] 0: set to the entries in the whole data (counting); n:
 *                   decodes at most n entries, in raw order, and is set to the number
 *                   decoded
 * entries           [out][optional when counting] entries, laid out set by set
 * Returns ZE_RESULT_SUCCESS; INVALID_NULL_HANDLE; INVALID_NULL_POINTER; INVALID_ARGUMENT
 * (a metric not decodable or given twice; truncated or corrupt raw data, after decoding the
 * whole records before it). */
ZEHAL_API ze_result_t zehal_metric_tracer_decode(zehal_metric_decoder_t decoder, size_t* raw_size, const uint8_t* raw,
                                                 uint32_t metric_count, zehal_metric_t* metrics, uint32_t* set_count,
                                                 uint32_t* entries_per_set, uint32_t* entry_count,
                                                 zehal_metric_entry_t* entries);

#ifdef __cplusplus
}
#endif

#endif
