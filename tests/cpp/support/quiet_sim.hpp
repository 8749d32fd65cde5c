// A sim configuration without the asynchronous trace source, so that a tracer's data holds
// only what a test's commands produced.
#pragma once

#include <cstdint>

#include "hal/sim/sim_config.hpp"

namespace zehal::test {

inline sim::SimConfig quiet(uint32_t subdevices = 0) {
    sim::SimConfig c;
    c.async_records_per_s = 0;
    c.subdevices = subdevices;
    return c;
}

}  // namespace zehal::test
