// The calling thread's last error, as zeDriverGetLastErrorDescription describes it: every
// API function of the dispatch tables records the errors it returns (dispatch.hpp).
#include <string>

#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// The description of the calling thread's last error; empty before its first. Each thread
// has its own, so the string a thread was handed stays valid until its next error.
thread_local std::string t_last_error;

ze_result_t zeDriverGetLastErrorDescription_(ze_driver_handle_t hDriver, const char** ppString) {
    return ze_guarded([&] {
        DriverObject* d = nullptr;
        if (ze_result_t r = driver_of(hDriver, &d); r != ZE_RESULT_SUCCESS) return r;
        if (!ppString) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        *ppString = t_last_error.c_str();
        return ZE_RESULT_SUCCESS;
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeDriverGetLastErrorDescription, zeDriverGetLastErrorDescription_),
};

}  // namespace

void record_error(std::string_view api, ze_result_t result) noexcept {
    try {
        t_last_error.assign(api).append(" returned ").append(result_name(result));
    } catch (...) {
        t_last_error.clear();  // out of memory: no description rather than a stale one
    }
}

std::span<const Entry> last_error_entries() { return kEntries; }

}  // namespace zehal::ze_driver
