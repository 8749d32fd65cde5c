/* The version of the zehal library a program runs with. */
#ifndef ZEHAL_VERSION_H
#define ZEHAL_VERSION_H

#include "zehal/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version, "major.minor.patch" (static storage; never NULL). */
ZEHAL_API const char* zehal_version(void);

#ifdef __cplusplus
}
#endif

#endif
