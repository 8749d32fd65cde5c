// CUPTI's activity API and its PM sampling API, resolved at run time from libcupti.so*
// (nothing is linked).
#pragma once

#include <cupti_activity.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>

#include <string>

namespace zehal::cuda {

// The CUPTI entry points zehal uses, with the header's signatures.
// (An X-macro list, laid out by hand.)
// clang-format off
#define ZEHAL_CUPTI_FUNCTIONS(X)                                                                  \
    X(cuptiGetVersion) X(cuptiGetResultString) X(cuptiActivityEnable) X(cuptiActivityDisable)    \
    X(cuptiActivityRegisterCallbacks) X(cuptiActivityFlushAll) X(cuptiActivityGetNextRecord)     \
    X(cuptiActivityGetNumDroppedRecords) X(cuptiActivityRegisterTimestampCallback)
// clang-format on

struct CuptiApi {
#define ZEHAL_CUPTI_DECLARE(name) decltype(&::name) name = nullptr;
    ZEHAL_CUPTI_FUNCTIONS(ZEHAL_CUPTI_DECLARE)
#undef ZEHAL_CUPTI_DECLARE
};

// The entry points of PM sampling (the device's performance counters sampled at a fixed
// interval) and of the profiler host API that configures and evaluates them. A library
// older than PM sampling lacks them: the activity table above still loads.
// clang-format off
#define ZEHAL_CUPTI_PROFILER_FUNCTIONS(X)                                                         \
    X(cuptiProfilerInitialize) X(cuptiProfilerDeviceSupported) X(cuptiDeviceGetChipName)         \
    X(cuptiPmSamplingEnable) X(cuptiPmSamplingDisable) X(cuptiPmSamplingSetConfig)                \
    X(cuptiPmSamplingStart) X(cuptiPmSamplingStop) X(cuptiPmSamplingDecodeData)                   \
    X(cuptiPmSamplingGetCounterAvailability) X(cuptiPmSamplingGetCounterDataSize)                 \
    X(cuptiPmSamplingCounterDataImageInitialize) X(cuptiPmSamplingGetCounterDataInfo)             \
    X(cuptiPmSamplingCounterDataGetSampleInfo) X(cuptiProfilerHostInitialize)                     \
    X(cuptiProfilerHostDeinitialize) X(cuptiProfilerHostConfigAddMetrics)                         \
    X(cuptiProfilerHostGetConfigImageSize) X(cuptiProfilerHostGetConfigImage)                     \
    X(cuptiProfilerHostGetNumOfPasses) X(cuptiProfilerHostEvaluateToGpuValues)
// clang-format on

struct CuptiProfilerApi {
#define ZEHAL_CUPTI_DECLARE(name) decltype(&::name) name = nullptr;
    ZEHAL_CUPTI_PROFILER_FUNCTIONS(ZEHAL_CUPTI_DECLARE)
#undef ZEHAL_CUPTI_DECLARE
};

// The CUPTI table, loaded on first use (thread-safe), from ZEHAL_CUPTI_LIBRARY if set,
// else the loader's search path, else the toolkit's usual places (CUDA_HOME, CUDA_PATH,
// /usr/local/cuda*: extras/CUPTI/lib64 and lib64). Null when none loads, an entry point
// is missing, or its major version differs from the header's; *why then says which.
const CuptiApi* cupti_api(std::string* why);

// The PM sampling table from the same library: null (with *why) when cupti_api() is, or
// when the library lacks one of its entry points.
const CuptiProfilerApi* cupti_profiler_api(std::string* why);

}  // namespace zehal::cuda
