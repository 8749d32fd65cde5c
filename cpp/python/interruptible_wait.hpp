// The one way a blocking Python call waits: in slices without the GIL, taking it back
// between slices only to let Python handle signals (Ctrl-C interrupts a long wait).
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "bindings.hpp"
#include "common/clock.hpp"
#include "python/gil.hpp"

namespace zehal::py {

// The timeout in ns of a Python `timeout` in seconds: None or +inf → forever; a negative
// value or NaN raises InvalidArgumentError naming `what`.
inline uint64_t timeout_ns(const std::optional<double>& seconds, std::string_view what) {
    if (!seconds || (std::isinf(*seconds) && *seconds > 0)) return kWaitForever;
    if (std::isnan(*seconds) || *seconds < 0)
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT, std::string(what) + ": timeout must be None or >= 0 seconds");
    const double ns = *seconds * 1e9;
    return ns >= static_cast<double>(kWaitForever - 1) ? kWaitForever - 1 : static_cast<uint64_t>(ns);
}

// Calls `wait(slice_ns)` (a ze_result_t wait, NOT_READY when the slice ran out) without the
// GIL until it answers something else or `seconds` passed. Returns the last answer:
// NOT_READY means timed out. Raises what a signal handler raised.
template <typename Wait>
ze_result_t interruptible_wait(const std::optional<double>& seconds, std::string_view what, Wait&& wait) {
    constexpr uint64_t kSliceNs = 100'000'000;
    const uint64_t total = timeout_ns(seconds, what);
    const uint64_t deadline = total == kWaitForever ? kWaitForever : host_now_ns() + total;
    for (;;) {
        const uint64_t now = host_now_ns();
        const uint64_t left = deadline == kWaitForever ? kWaitForever : (deadline > now ? deadline - now : 0);
        const uint64_t slice = left < kSliceNs ? left : kSliceNs;
        const ze_result_t r = without_gil([&] { return wait(slice); });
        if (r != ZE_RESULT_NOT_READY || slice == left) return r;
        if (PyErr_CheckSignals() != 0) throw pyb::error_already_set();
    }
}

}  // namespace zehal::py
