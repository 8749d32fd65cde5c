// The driver's side of the loader's dispatch: the API functions zehal implements, by name,
// and the filling of a dispatch table for the version a loader asks for.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <type_traits>

#include <level_zero/ze_api.h>

#include "common/api_call_log.hpp"
#include "common/status.hpp"

namespace zehal::ze_driver {

// An API function of the driver: its specification name and its address.
struct Entry {
    std::string_view name;
    void (*address)();
};

// Notes that API function `api` returned error `result` (a code result_ok() refuses) on
// the calling thread: what zeDriverGetLastErrorDescription describes (last_error.cpp).
void record_error(std::string_view api, ze_result_t result) noexcept;

// An API function's name as a template argument.
template <size_t N>
struct ApiName {
    constexpr ApiName(const char (&s)[N]) { std::copy_n(s, N, text); }
    char text[N];
};

// The function the dispatch tables hold for implementation `Impl` of API function `Name`
// (signature `Api`): it runs `Impl`, timed as a host API call while a trace records them,
// and records an error result for the calling thread.
template <typename Api, auto Impl, ApiName Name>
struct ErrorRecording;
template <typename... Args, auto Impl, ApiName Name>
struct ErrorRecording<ze_result_t (*)(Args...), Impl, Name> {
    static ze_result_t call(Args... args) {
        static const uint32_t api_call = api_call_log::intern(Name.text);
        const ApiCallScope timed(api_call);
        const ze_result_t r = Impl(args...);
        if (!result_ok(r)) record_error(Name.text, r);
        return r;
    }
};

// `Impl` as an Entry for API function `Api`, checked at compile time to have exactly the
// signature the specification gives `Api` (its prototype in the headers or spec_ext.h).
template <typename Api, auto Impl, ApiName Name>
inline Entry entry() {
    static_assert(std::is_same_v<decltype(Impl), Api>, "an implementation has its API function's signature");
    return {Name.text, reinterpret_cast<void (*)()>(&ErrorRecording<Api, Impl, Name>::call)};
}
#define ZEHAL_ENTRY(api, impl) ::zehal::ze_driver::entry<decltype(&::api), &impl, #api>()

// The entries of each family of API functions (defined beside their implementations).
std::span<const Entry> driver_entries();
std::span<const Entry> memory_entries();
std::span<const Entry> event_entries();
std::span<const Entry> command_entries();
std::span<const Entry> metric_entries();
std::span<const Entry> last_error_entries();
std::span<const Entry> region_copy_entries();
std::span<const Entry> immediate_append_entries();
std::span<const Entry> device_kernel_limits_entries();
std::span<const Entry> metric_group_exp_entries();
std::span<const Entry> memory_hints_entries();
std::span<const Entry> module_entries();
std::span<const Entry> kernel_entries();
std::span<const Entry> launch_entries();
std::span<const Entry> virtual_memory_entries();
std::span<const Entry> metric_streamer_entries();
std::span<const Entry> metric_query_entries();
std::span<const Entry> metric_calculate_entries();
std::span<const Entry> object_query_entries();
std::span<const Entry> ipc_memory_entries();
std::span<const Entry> ipc_event_pool_entries();
std::span<const Entry> system_barrier_entries();

// The address of implemented API function `name`; null when the driver lacks it.
void (*find_entry(std::string_view name))();

// Fills the table that loader getter `getter` returns, for a loader asking `version`: only
// the members of API versions up to `version` are written, each with the function zehal
// implements or one that answers ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. INVALID_NULL_POINTER
// for a null table; UNSUPPORTED_VERSION for a major version other than 1.
ze_result_t fill_table(std::string_view getter, ze_api_version_t version, void* table) noexcept;

}  // namespace zehal::ze_driver
