// Python integers as C++ integers, with zehal's errors for values that do not fit.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "python/bindings.hpp"

namespace zehal::py {

// The Python int `value` as T. A non-integer raises TypeError; a value outside T's range
// (a negative size, say) raises the zehal error of `out_of_range` naming `what`.
template <typename T>
T int_arg(pyb::handle value, std::string_view what, ze_result_t out_of_range = ZE_RESULT_ERROR_INVALID_ARGUMENT) {
    // Whether a long long `v` is a value of T.
    auto fits = [](long long v) {
        if constexpr (std::numeric_limits<T>::is_signed)
            return v >= static_cast<long long>(std::numeric_limits<T>::min()) &&
                   v <= static_cast<long long>(std::numeric_limits<T>::max());
        else
            return v >= 0 && static_cast<unsigned long long>(v) <= std::numeric_limits<T>::max();
    };
    int overflow = 0;
    // An exact int that fits, the usual case, needs no __index__ call and no new reference.
    if (PyLong_CheckExact(value.ptr())) {
        const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
        if (overflow == 0 && fits(v)) return static_cast<T>(v);
    }
    if (!PyLong_Check(value.ptr()) && !PyIndex_Check(value.ptr()))
        throw pyb::type_error(std::string(what) + " must be an integer");
    pyb::int_ i = pyb::reinterpret_steal<pyb::int_>(PyNumber_Index(value.ptr()));
    if (!i) throw pyb::error_already_set();
    const long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
    if (overflow == 0 && fits(v)) return static_cast<T>(v);
    if constexpr (!std::numeric_limits<T>::is_signed) {
        if (overflow > 0) {
            const unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
            if (!PyErr_Occurred() && u <= std::numeric_limits<T>::max()) return static_cast<T>(u);
            PyErr_Clear();
        }
    }
    check(out_of_range, std::string(what) + " = " + pyb::repr(value).cast<std::string>() + " is out of range");
    return T{};
}

}  // namespace zehal::py
