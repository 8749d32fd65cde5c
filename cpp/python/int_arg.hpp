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
    // An exact int is read as it is (no __index__ call, no new reference); anything else
    // through __index__.
    PyObject* i = value.ptr();
    pyb::object index;
    if (!PyLong_CheckExact(i)) {
        if (!PyLong_Check(i) && !PyIndex_Check(i)) throw pyb::type_error(std::string(what) + " must be an integer");
        index = pyb::reinterpret_steal<pyb::object>(PyNumber_Index(i));
        if (!index) throw pyb::error_already_set();
        i = index.ptr();
    }
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(i, &overflow);
    if constexpr (std::numeric_limits<T>::is_signed) {
        if (overflow == 0 && v >= static_cast<long long>(std::numeric_limits<T>::min()) &&
            v <= static_cast<long long>(std::numeric_limits<T>::max()))
            return static_cast<T>(v);
    } else {
        if (overflow == 0 && v >= 0 && static_cast<unsigned long long>(v) <= std::numeric_limits<T>::max())
            return static_cast<T>(v);
        if (overflow > 0) {
            const unsigned long long u = PyLong_AsUnsignedLongLong(i);
            if (!PyErr_Occurred() && u <= std::numeric_limits<T>::max()) return static_cast<T>(u);
            PyErr_Clear();
        }
    }
    check(out_of_range, std::string(what) + " = " + pyb::repr(value).cast<std::string>() + " is out of range");
    return T{};
}

}  // namespace zehal::py
