// Must not compile: the layer of this target cannot see aml/dma.hpp.
#include "aml/dma.hpp"
