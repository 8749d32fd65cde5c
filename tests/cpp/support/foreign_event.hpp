// An event of no pool of any device under test (as another backend's would be): what a queue
// must refuse to signal, reset, query or take back.
#pragma once

#include "hal/event.hpp"

namespace zehal::test {

// Its own pool of one event; answers as a signalled event without timestamps.
class ForeignEvent final : public hal::Event, public hal::EventPool {
public:
    ze_result_t query() override { return ZE_RESULT_SUCCESS; }
    ze_result_t host_synchronize(uint64_t) override { return ZE_RESULT_SUCCESS; }
    ze_result_t host_signal() override { return ZE_RESULT_SUCCESS; }
    ze_result_t host_reset() override { return ZE_RESULT_SUCCESS; }
    ze_result_t query_kernel_timestamps(uint32_t*, hal::KernelTimestampResult*) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    ze_result_t query_synchronized_timestamps(uint32_t*, hal::KernelTimestampResult*) override {
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    }
    hal::EventPool& pool() override { return *this; }
    uint32_t count() const override { return 1; }
    uint32_t flags() const override { return 0; }
    ze_result_t event(uint32_t, hal::EventRef*) override { return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; }
};

}  // namespace zehal::test
