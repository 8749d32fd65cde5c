// C API: aml_errno, aml_strerror, aml_perror, aml_errno_from_ze_result.
#include <cstdio>

#include "aml/errors.hpp"
#include "aml/utils/error.h"

extern "C" {

int* aml_errno_location(void) { return &zehal::aml::thread_errno(); }

const char* aml_strerror(const int err) { return zehal::aml::error_message(err); }

void aml_perror(const char* msg) {
    const char* text = zehal::aml::error_message(zehal::aml::thread_errno());
    if (msg)
        std::fprintf(stderr, "%s:%s\n", msg, text);
    else
        std::fprintf(stderr, "%s\n", text);
}

int aml_errno_from_ze_result(ze_result_t err) { return zehal::aml::errno_from_result(err); }

}  // extern "C"
