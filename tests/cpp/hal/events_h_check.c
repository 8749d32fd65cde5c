/* zehal/events.h compiles as C11 on its own, and its types have the layout C users expect. */
#include "zehal/events.h"

#include <stddef.h>

_Static_assert(sizeof(zehal_kernel_timestamp_result_t) == 32, "four uint64_t");
_Static_assert(offsetof(zehal_kernel_timestamp_result_t, context) == 16, "global, then context");
_Static_assert(ZEHAL_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP == 8u, "Level Zero's value");

/* Every entry point, referenced from C (declared exactly once, with C linkage). */
typedef void (*zehal_any_function)(void);
zehal_any_function zehal_events_h_entry_points[] = {
    (zehal_any_function)zehal_device_get_timestamp_properties,
    (zehal_any_function)zehal_device_get_global_timestamps,
    (zehal_any_function)zehal_event_pool_create,
    (zehal_any_function)zehal_event_pool_destroy,
    (zehal_any_function)zehal_event_create,
    (zehal_any_function)zehal_event_destroy,
    (zehal_any_function)zehal_event_query_status,
    (zehal_any_function)zehal_event_host_synchronize,
    (zehal_any_function)zehal_event_host_signal,
    (zehal_any_function)zehal_event_host_reset,
    (zehal_any_function)zehal_event_query_kernel_timestamps_ext,
};
