/* Level Zero's headers, then zehal's: both compile in one translation unit. */
#include <level_zero/ze_api.h>
#include <level_zero/zet_api.h>
#include <aml.h>
#include <aml/area/ze.h>
#include <zehal/metrics.h>

ze_result_t level_zero_then_zehal_c(void) { return ZE_RESULT_SUCCESS; }
