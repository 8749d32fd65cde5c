// pybind11's casters of zehal's classes refuse instances whose C++ object was never made.
#pragma once

#include <pybind11/pybind11.h>

#include "aml/area.hpp"
#include "hal/device.hpp"
#include "hal/event.hpp"
#include "hal/types.hpp"
#include "python/fast_call.hpp"

namespace zehal::py {

// pybind11's caster of class T (its object taken by value, reference or pointer: every
// method's self), refusing an instance made by Cls.__new__(Cls) without __init__. pybind11's
// own caster would allocate raw memory for the missing object and run the method on it; this
// one does not load, so pybind11 answers TypeError (no matching signature) and nothing is read.
template <typename T>
class MadeCaster : public pybind11::detail::type_caster_base<T> {
public:
    bool load(pybind11::handle src, bool convert) {
        if (PyObject_TypeCheck(src.ptr(), type_of<T>().type) && !instance_of<T>(src.ptr())) return false;
        return pybind11::detail::type_caster_base<T>::load(src, convert);
    }
};

}  // namespace zehal::py

// Makes MadeCaster the caster of class T. Declared, at namespace scope, in every translation
// unit that casts T, before the first cast: next to the class for the bindings' own classes,
// here for the classes of the layers below.
#define ZEHAL_PY_MADE_CASTER(T)                                \
    namespace pybind11::detail {                               \
    template <>                                                \
    class type_caster<T> : public zehal::py::MadeCaster<T> {}; \
    }

ZEHAL_PY_MADE_CASTER(zehal::hal::Device)
ZEHAL_PY_MADE_CASTER(zehal::hal::DeviceProperties)
ZEHAL_PY_MADE_CASTER(zehal::hal::Event)
ZEHAL_PY_MADE_CASTER(zehal::aml::Area)

namespace zehal::py {

// __enter__ of a context manager of class C: the object itself (TypeError for an instance
// never initialized, as every method).
template <typename C>
pybind11::object enter(pybind11::object self) {
    self_of<C>(self.ptr(), "__enter__");
    return self;
}

}  // namespace zehal::py
