// Metric values from the raw data of streamers and queries
// (zetMetricGroupCalculateMetricValues, zetMetricGroupCalculateMultipleMetricValuesExp).
#include <algorithm>
#include <cstring>
#include <vector>

#include "dispatch.hpp"
#include "metric_objects.hpp"
#include "common/c_boundary.hpp"
#include "metrics/counter_report.hpp"

namespace zehal::ze_driver {
namespace {

static_assert(sizeof(zet_typed_value_t) == sizeof(metrics::TypedValue) &&
                  offsetof(zet_typed_value_t, value) == offsetof(metrics::TypedValue, bits),
              "zet_typed_value_t is metrics::TypedValue");

// The values of the raw data, after the checks both functions share.
ze_result_t values_of(zet_metric_group_handle_t hMetricGroup, zet_metric_group_calculation_type_t type,
                      size_t rawDataSize, const uint8_t* pRawData, std::vector<metrics::TypedValue>* out) {
    metrics::MetricGroupRef g;
    if (ze_result_t r = metric_group_of(hMetricGroup, &g); r != ZE_RESULT_SUCCESS) return r;
    if (!pRawData) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return metrics::calculate(*g, type, {pRawData, rawDataSize}, out);
}

// *pMetricValueCount 0: the number of values; else up to that many values, and the count
// written.
ze_result_t zetMetricGroupCalculateMetricValues_(zet_metric_group_handle_t hMetricGroup,
                                                 zet_metric_group_calculation_type_t type, size_t rawDataSize,
                                                 const uint8_t* pRawData, uint32_t* pMetricValueCount,
                                                 zet_typed_value_t* pMetricValues) {
    return ze_guarded([&] {
        if (!pMetricValueCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<metrics::TypedValue> values;
        if (ze_result_t r = values_of(hMetricGroup, type, rawDataSize, pRawData, &values); r != ZE_RESULT_SUCCESS)
            return r;
        const auto total = static_cast<uint32_t>(values.size());
        if (*pMetricValueCount == 0) {
            *pMetricValueCount = total;
            return ZE_RESULT_SUCCESS;
        }
        if (!pMetricValues) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const uint32_t n = std::min(*pMetricValueCount, total);
        std::memcpy(pMetricValues, values.data(), n * sizeof(metrics::TypedValue));
        *pMetricValueCount = n;
        return ZE_RESULT_SUCCESS;
    });
}

// One set (the counters are the root device's). *pSetCount or *pTotalMetricValueCount 0, or
// no output arrays: the counts; else the values, up to *pTotalMetricValueCount.
ze_result_t zetMetricGroupCalculateMultipleMetricValuesExp_(zet_metric_group_handle_t hMetricGroup,
                                                            zet_metric_group_calculation_type_t type,
                                                            size_t rawDataSize, const uint8_t* pRawData,
                                                            uint32_t* pSetCount, uint32_t* pTotalMetricValueCount,
                                                            uint32_t* pMetricCounts, zet_typed_value_t* pMetricValues) {
    return ze_guarded([&] {
        if (!pSetCount || !pTotalMetricValueCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        std::vector<metrics::TypedValue> values;
        if (ze_result_t r = values_of(hMetricGroup, type, rawDataSize, pRawData, &values); r != ZE_RESULT_SUCCESS)
            return r;
        const auto total = static_cast<uint32_t>(values.size());
        if (*pSetCount == 0 || *pTotalMetricValueCount == 0 || !pMetricCounts || !pMetricValues) {
            *pSetCount = 1;
            *pTotalMetricValueCount = total;
            return ZE_RESULT_SUCCESS;
        }
        const uint32_t n = std::min(*pTotalMetricValueCount, total);
        std::memcpy(pMetricValues, values.data(), n * sizeof(metrics::TypedValue));
        *pSetCount = 1;
        *pTotalMetricValueCount = n;
        pMetricCounts[0] = n;
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zetMetricGroupCalculateMetricValues, zetMetricGroupCalculateMetricValues_),
    ZEHAL_ENTRY(zetMetricGroupCalculateMultipleMetricValuesExp, zetMetricGroupCalculateMultipleMetricValuesExp_),
};

}  // namespace

std::span<const Entry> metric_calculate_entries() { return kEntries; }

}  // namespace zehal::ze_driver
