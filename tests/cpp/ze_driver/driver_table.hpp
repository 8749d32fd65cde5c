// A function of an API version newer than the loader the tests run on (Debian's 1.8), taken
// from the driver's own dispatch table as a newer loader would: the getter of its table,
// asked for that version, and the member's slot as ddi_layouts.inc places it.
#pragma once

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <level_zero/ze_api.h>

namespace zetest {

// The function `function` of table `getter` for API 1.`minor`, as type F; null when the
// driver (ZEHAL_ZE_DRIVER) or the member cannot be had.
template <typename F>
F driver_table_function(std::string_view getter, std::string_view function, uint32_t minor) {
    const char* path = std::getenv("ZEHAL_ZE_DRIVER");
    if (!path) return nullptr;
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib) return nullptr;
    // The member's slot in its table: its position among the table's members.
    struct Line {
        std::string_view name;
        bool table;
    };
    static constexpr Line kLines[] = {
#define ZEHAL_DDI_TABLE(g) {#g, true},
#define ZEHAL_DDI_MEMBER(f, minor) {#f, false},
#define ZEHAL_DDI_TABLE_END()
#include "ddi_layouts.inc"
#undef ZEHAL_DDI_TABLE
#undef ZEHAL_DDI_MEMBER
#undef ZEHAL_DDI_TABLE_END
    };
    bool in_table = false, found = false;
    size_t slot = 0;
    for (const Line& line : kLines) {
        if (line.table) {
            in_table = line.name == getter;
            slot = 0;
        } else if (in_table && line.name == function) {
            found = true;
            break;
        } else {
            ++slot;
        }
    }
    using Getter = ze_result_t (*)(ze_api_version_t, void*);
    auto get = reinterpret_cast<Getter>(dlsym(lib, std::string(getter).c_str()));
    void* table[128] = {};
    if (!found || !get || slot >= 128 ||
        get(static_cast<ze_api_version_t>(ZE_MAKE_VERSION(1, minor)), table) != ZE_RESULT_SUCCESS)
        return nullptr;
    return reinterpret_cast<F>(table[slot]);
}

}  // namespace zetest
