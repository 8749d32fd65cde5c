// Must not compile: the layer of this target cannot see aml/area.hpp.
#include "aml/area.hpp"
