// Methods called through CPython's vectorcall protocol (METH_FASTCALL | METH_KEYWORDS)
// directly, for the hottest calls: pybind11's dispatcher builds a dict of the keyword
// arguments and makes a new string per parameter name on every call, which costs more than
// the work of a short copy.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <array>
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

namespace zehal::py {

// The parameters of a method: names (interned once, kept for the life of the process), how
// many may be passed by position, and how many (the first ones) must be passed.
class FastParams {
public:
    FastParams(std::initializer_list<const char*> names, size_t positional, size_t required = 0)
        : positional_(positional),
          required_(required) {
        for (const char* n : names) names_.push_back(PyUnicode_InternFromString(n));
    }
    // Places each argument of a vectorcall (args[0, nargs) by position, then one per name of
    // `kwnames`) into slots[i] by parameter (borrowed; slots of parameters not given stay
    // null; `slots` has one per parameter). False with TypeError set for too many positional
    // arguments, an unknown keyword, a parameter given twice or a required one missing.
    bool parse(const char* method, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               std::span<PyObject*> slots) const {
        if (slots.size() != names_.size()) {  // a binding's mistake, not the caller's
            PyErr_Format(PyExc_SystemError, "%s: %zu argument slots for %zu parameters", method, slots.size(),
                         names_.size());
            return false;
        }
        if (static_cast<size_t>(nargs) > positional_) {
            PyErr_Format(PyExc_TypeError, "%s takes at most %zu positional arguments (%zd given)", method, positional_,
                         nargs);
            return false;
        }
        for (Py_ssize_t i = 0; i < nargs; ++i) slots[static_cast<size_t>(i)] = args[i];
        const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        for (Py_ssize_t k = 0; k < nkw; ++k) {
            PyObject* key = PyTuple_GET_ITEM(kwnames, k);
            const size_t at = find(key);
            if (at == names_.size()) {
                PyErr_Format(PyExc_TypeError, "%s got an unexpected keyword argument '%U'", method, key);
                return false;
            }
            if (slots[at]) {
                PyErr_Format(PyExc_TypeError, "%s got multiple values for argument '%U'", method, key);
                return false;
            }
            slots[at] = args[nargs + k];
        }
        for (size_t i = 0; i < required_; ++i)
            if (!slots[i]) {
                PyErr_Format(PyExc_TypeError, "%s missing required argument '%U'", method, names_[i]);
                return false;
            }
        return true;
    }

private:
    // The index of parameter `key`, or size() when there is none: interned keys (those of
    // the interpreter's own calls) match by identity, others by value.
    size_t find(PyObject* key) const {
        for (size_t i = 0; i < names_.size(); ++i)
            if (names_[i] == key) return i;
        for (size_t i = 0; i < names_.size(); ++i)
            if (PyUnicode_Compare(names_[i], key) == 0) return i;
        PyErr_Clear();  // (a comparison with a non-str key)
        return names_.size();
    }

    std::vector<PyObject*> names_;
    size_t positional_;
    size_t required_;
};

// Runs `body` (which returns a new reference) with C++ exceptions turned into Python ones,
// as pybind11 does for the functions it binds.
template <typename Body>
PyObject* fast_call_guarded(Body&& body) noexcept {
    try {
        return body();
    } catch (pybind11::error_already_set& e) {
        e.restore();
    } catch (const pybind11::builtin_exception& e) {
        e.set_error();
    } catch (const std::bad_alloc&) {
        PyErr_NoMemory();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    return nullptr;
}

// The type information of the pybind11 class of T, looked up once per process (a look-up
// costs a hash of the type's name on every call otherwise).
template <typename T>
const pybind11::detail::type_info& type_of() {
    static const pybind11::detail::type_info* const type = pybind11::detail::get_type_info(typeid(T), true);
    return *type;
}

// The value and holder of `obj` when it is an instance of the pybind11 class of T (or of a
// Python subclass) whose object was made; one whose `inst` is null otherwise. No exception.
template <typename T>
pybind11::detail::value_and_holder made_instance(PyObject* obj) noexcept {
    if (!PyObject_TypeCheck(obj, type_of<T>().type)) return {};
    auto* inst = reinterpret_cast<pybind11::detail::instance*>(obj);
    pybind11::detail::value_and_holder v_h = inst->get_value_and_holder(&type_of<T>(), false);
    // (value_and_holder's operator bool reads the value pointer: only on one found.)
    return v_h.inst && v_h && v_h.holder_constructed() ? v_h : pybind11::detail::value_and_holder{};
}

// The C++ object of `obj` when it is an instance of the class of T whose object was made;
// null otherwise. No exception.
template <typename T>
T* instance_of(PyObject* obj) noexcept {
    const pybind11::detail::value_and_holder v_h = made_instance<T>(obj);
    return v_h.inst ? static_cast<T*>(v_h.value_ptr()) : nullptr;
}

// The C++ object of `self`, an instance of the class of T (a method descriptor of that
// class checked it). TypeError for an instance whose object was never made (a Python
// subclass that skipped it).
template <typename T>
T& self_of(PyObject* self, const char* method) {
    T* value = instance_of<T>(self);
    if (!value) throw pybind11::type_error(std::string(method) + ": the object was not initialized");
    return *value;
}

// The holder of `self`, an instance of a class of T held by shared_ptr (as self_of).
template <typename T>
const std::shared_ptr<T>& holder_of(PyObject* self, const char* method) {
    const pybind11::detail::value_and_holder v_h = made_instance<T>(self);
    if (!v_h.inst) throw pybind11::type_error(std::string(method) + ": the object was not initialized");
    return v_h.template holder<std::shared_ptr<T>>();
}

// A new Python object holding `ref` (a shared_ptr holder of a pybind11 class of T).
template <typename T>
PyObject* cast_holder(std::shared_ptr<T> ref) {
    return pybind11::detail::type_caster_generic::cast(ref.get(), pybind11::return_value_policy::take_ownership, {},
                                                       &type_of<T>(), nullptr, nullptr, &ref)
        .ptr();
}

// The body of a vectorcall method (METH_FASTCALL | METH_KEYWORDS) of N parameters: the
// arguments parsed by `params` into N slots (TypeError for a call Python would refuse), then
// `body(slots)` run as fast_call_guarded runs it.
template <size_t N, typename Body>
PyObject* fast_call(const FastParams& params, const char* method, PyObject* const* args, Py_ssize_t nargs,
                    PyObject* kwnames, Body&& body) noexcept {
    std::array<PyObject*, N> slots{};
    if (!params.parse(method, args, nargs, kwnames, slots)) return nullptr;
    return fast_call_guarded([&]() -> PyObject* { return body(slots); });
}

// Adds `def` (METH_FASTCALL | METH_KEYWORDS, kept alive by the caller) to class `cls` as
// a method: a method descriptor, which checks that `self` is an instance of `cls`.
inline void add_fast_method(pybind11::handle cls, PyMethodDef* def) {
    pybind11::object descr = pybind11::reinterpret_steal<pybind11::object>(
        PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def));
    if (!descr) throw pybind11::error_already_set();
    pybind11::setattr(cls, def->ml_name, descr);
}

}  // namespace zehal::py
