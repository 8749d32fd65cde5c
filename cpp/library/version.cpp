// zehal_version(): the version libzehal.so was built with (from pyproject.toml).
#include "zehal/version.h"

extern "C" const char* zehal_version(void) { return ZEHAL_VERSION_STRING; }
