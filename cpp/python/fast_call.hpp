// Methods called through CPython's vectorcall protocol (METH_FASTCALL | METH_KEYWORDS)
// directly, for the hottest calls: pybind11's dispatcher builds a dict of the keyword
// arguments and makes a new string per parameter name on every call, which costs more than
// the work of a short copy.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <typeinfo>
#include <vector>

namespace zehal::py {

// The parameters of a method: names (interned once, kept for the life of the process) and
// how many may be passed by position.
class FastParams {
public:
    FastParams(std::initializer_list<const char*> names, size_t positional) : positional_(positional) {
        for (const char* n : names) names_.push_back(PyUnicode_InternFromString(n));
    }
    size_t size() const noexcept { return names_.size(); }

    // Places each argument of a vectorcall (args[0, nargs) by position, then one per name of
    // `kwnames`) into slots[i] by parameter (borrowed; slots of parameters not given stay
    // null). False with TypeError set for too many positional arguments, an unknown keyword,
    // or a parameter given twice.
    bool parse(const char* method, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames,
               std::span<PyObject*> slots) const {
        if (static_cast<size_t>(nargs) > positional_) {
            PyErr_Format(PyExc_TypeError, "%s takes at most %zu positional arguments (%zd given)", method,
                         positional_, nargs);
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

// The holder of `self`, an instance of a pybind11 class of T held by shared_ptr (a method
// descriptor of that class checked it): read from the instance without a type look-up.
// TypeError for an instance whose C++ object was never made (a Python subclass that
// skipped it).
template <typename T>
const std::shared_ptr<T>& holder_of(PyObject* self, const char* method) {
    auto* inst = reinterpret_cast<pybind11::detail::instance*>(self);
    const pybind11::detail::value_and_holder v_h = inst->get_value_and_holder();
    if (!v_h.holder_constructed()) throw pybind11::type_error(std::string(method) + ": the object was not initialized");
    return v_h.holder<std::shared_ptr<T>>();
}

// A new Python object holding `ref` (a shared_ptr holder of a pybind11 class of T), with the
// class's type information looked up once per process rather than on each call.
template <typename T>
PyObject* cast_holder(std::shared_ptr<T> ref) {
    static const pybind11::detail::type_info* const type = pybind11::detail::get_type_info(typeid(T));
    return pybind11::detail::type_caster_generic::cast(ref.get(), pybind11::return_value_policy::take_ownership, {},
                                                       type, nullptr, nullptr, &ref)
        .ptr();
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
