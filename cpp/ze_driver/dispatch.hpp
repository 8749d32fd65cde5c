// The driver's side of the loader's dispatch: the API functions zehal implements, by name,
// and the filling of a dispatch table for the version a loader asks for.
#pragma once

#include <span>
#include <string_view>

#include <level_zero/ze_api.h>

namespace zehal::ze_driver {

// An API function of the driver: its specification name and its address.
struct Entry {
    std::string_view name;
    void (*address)();
};

// `impl` as an Entry for API function `Api`, checked at compile time to have exactly the
// signature the specification gives `Api` (its prototype in the headers or spec_ext.h).
template <typename Api>
inline Entry entry(std::string_view name, Api impl) {
    return {name, reinterpret_cast<void (*)()>(impl)};
}
#define ZEHAL_ENTRY(api, impl) ::zehal::ze_driver::entry<decltype(&::api)>(#api, &impl)

// The entries of each family of API functions (defined beside their implementations).
std::span<const Entry> driver_entries();
std::span<const Entry> memory_entries();
std::span<const Entry> event_entries();
std::span<const Entry> command_entries();
std::span<const Entry> metric_entries();

// The address of implemented API function `name`; null when the driver lacks it.
void (*find_entry(std::string_view name))();

// Fills the table that loader getter `getter` returns, for a loader asking `version`: only
// the members of API versions up to `version` are written, each with the function zehal
// implements or one that answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. INVALID_NULL_POINTER
// for a null table; UNSUPPORTED_VERSION for a major version other than 1.
ze_result_t fill_table(std::string_view getter, ze_api_version_t version, void* table) noexcept;

}  // namespace zehal::ze_driver
