/* ZEHAL_API marks a declaration of zehal's C API: it is exported from libzehal.so, while
 * everything else the library holds stays hidden. */
#ifndef ZEHAL_EXPORT_H
#define ZEHAL_EXPORT_H

#if defined(_WIN32)
#define ZEHAL_API __declspec(dllimport)
#elif defined(__GNUC__)
#define ZEHAL_API __attribute__((visibility("default")))
#else
#define ZEHAL_API
#endif

#endif
