/* zehal's headers, then Level Zero's: both compile in one translation unit. */
#include <aml.h>
#include <zehal/events.h>
#include <zehal/metrics.h>
#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>

ze_result_t zehal_then_level_zero_c(void) { return ZE_RESULT_SUCCESS; }
