// The loader's entry into the driver: one exported getter per dispatch table the loader
// may look up (ddi_layouts.inc). Only these, and nothing else of zehal, leave
// libze_zehal.so. This file sees no dispatch-table type: a getter's table is filled as an
// array of function pointers (dispatch.cpp).
#include "dispatch.hpp"

#define ZEHAL_DDI_TABLE(getter)                                                                                   \
    extern "C" __attribute__((visibility("default"))) ze_result_t getter(ze_api_version_t version, void* table) { \
        return ::zehal::ze_driver::fill_table(#getter, version, table);                                           \
    }
#define ZEHAL_DDI_MEMBER(function, minor)
#define ZEHAL_DDI_TABLE_END()
#include "ddi_layouts.inc"
