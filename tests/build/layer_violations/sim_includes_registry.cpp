// Must not compile: the layer of this target cannot see hal/registry.hpp.
#include "hal/registry.hpp"
