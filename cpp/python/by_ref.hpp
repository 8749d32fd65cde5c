// Methods that take their object by reference: member functions, __enter__.
#pragma once

#include <pybind11/pybind11.h>

#include <utility>

namespace zehal::py {

// `f`, a member function of C, as a callable taking the object by reference. pybind11
// passes a member function pointer its object by pointer, which is null for an instance
// made by Cls.__new__(Cls) without __init__ (the call would run on no object); by
// reference, pybind11 refuses the call with reference_cast_error, raised as TypeError
// (errors.cpp). Every method of the bindings takes its object this way.
template <typename C, typename R, typename... A>
auto by_ref(R (C::*f)(A...)) {
    return [f](C& self, A... args) -> R { return (self.*f)(std::forward<A>(args)...); };
}

template <typename C, typename R, typename... A>
auto by_ref(R (C::*f)(A...) const) {
    return [f](const C& self, A... args) -> R { return (self.*f)(std::forward<A>(args)...); };
}

// __enter__ of a context manager of class C: the object itself, once pybind11 found its C++
// object (TypeError, as by_ref, for an instance never initialized).
template <typename C>
pybind11::object enter(pybind11::object self) {
    self.cast<C&>();
    return self;
}

}  // namespace zehal::py
