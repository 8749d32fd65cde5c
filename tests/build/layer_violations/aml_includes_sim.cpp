// Must not compile: the layer of this target cannot see hal/sim/sim_device.hpp.
#include "hal/sim/sim_device.hpp"
