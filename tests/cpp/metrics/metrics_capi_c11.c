/* The metrics C API from C11: the header compiles as C, and a whole trace round trip. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "zehal/metrics.h"

/* Returns 0 when everything worked, else the line that failed. */
int zehal_metrics_c11_round_trip(zehal_device_t device) {
    uint32_t count = 0;
    if (zehal_metric_group_get(device, &count, NULL) != ZE_RESULT_SUCCESS || count == 0) return __LINE__;
    zehal_metric_group_t groups[16];
    if (count > 16) count = 16;
    if (zehal_metric_group_get(device, &count, groups) != ZE_RESULT_SUCCESS) return __LINE__;
    zehal_metric_group_t engine = NULL;
    for (uint32_t i = 0; i < count; ++i) {
        zehal_metric_group_properties_t p;
        if (zehal_metric_group_get_properties(groups[i], &p) != ZE_RESULT_SUCCESS) return __LINE__;
        if (strcmp(p.name, "EngineEvents") == 0 && (p.sampling_types & ZEHAL_METRIC_SAMPLING_TYPE_TRACER_BASED))
            engine = groups[i];
    }
    if (!engine) return __LINE__;
    if (zehal_device_activate_metric_groups(device, 1, &engine) != ZE_RESULT_SUCCESS) return __LINE__;

    uint32_t notify = 0;
    zehal_metric_tracer_t tracer = NULL;
    if (zehal_metric_tracer_create(device, 1, &engine, &notify, NULL, &tracer) != ZE_RESULT_SUCCESS) return __LINE__;
    if (notify == 0 || notify % ZEHAL_METRIC_RECORD_SIZE) return __LINE__;
    zehal_metric_decoder_t decoder = NULL;
    if (zehal_metric_decoder_create(tracer, &decoder) != ZE_RESULT_SUCCESS) return __LINE__;
    if (zehal_metric_tracer_enable(tracer, 1) != ZE_RESULT_SUCCESS) return __LINE__;
    if (zehal_metric_tracer_disable(tracer, 1) != ZE_RESULT_SUCCESS) return __LINE__;

    size_t size = 0;
    if (zehal_metric_tracer_read_data(tracer, &size, NULL) != ZE_RESULT_SUCCESS || size == 0) return __LINE__;
    uint8_t* raw = (uint8_t*)malloc(size);
    if (!raw) return __LINE__;
    if (zehal_metric_tracer_read_data(tracer, &size, raw) != ZE_RESULT_SUCCESS) return __LINE__;
    /* Enable and disable records, after a clock sync. */
    uint16_t first_kind = 0, last_kind = 0;
    memcpy(&first_kind, raw, 2);
    memcpy(&last_kind, raw + size - ZEHAL_METRIC_RECORD_SIZE, 2);
    if (first_kind != ZEHAL_METRIC_RECORD_CLOCK_SYNC || last_kind != ZEHAL_METRIC_RECORD_DISABLE) return __LINE__;
    size_t empty = 64;
    uint8_t buf[64];
    if (zehal_metric_tracer_read_data(tracer, &empty, buf) != ZE_RESULT_NOT_READY || empty != 0) return __LINE__;

    uint32_t sets = 0, entries = 0;
    if (zehal_metric_tracer_decode(decoder, &size, raw, 0, NULL, &sets, NULL, &entries, NULL) != ZE_RESULT_SUCCESS)
        return __LINE__;
    if (sets != 1 || entries != 0) return __LINE__;
    free(raw);

    uint32_t decodable = 0;
    if (zehal_metric_decoder_get_decodable_metrics(decoder, &decodable, NULL) != ZE_RESULT_SUCCESS || decodable != 8)
        return __LINE__;
    if (zehal_metric_tracer_destroy(tracer) != ZE_RESULT_SUCCESS) return __LINE__;
    if (zehal_metric_tracer_destroy(tracer) != ZE_RESULT_ERROR_INVALID_NULL_HANDLE) return __LINE__;
    if (zehal_metric_decoder_destroy(decoder) != ZE_RESULT_SUCCESS) return __LINE__;
    return 0;
}
