// Methods called through CPython's vectorcall protocol (METH_FASTCALL | METH_KEYWORDS)
// directly, for the hottest calls: pybind11's dispatcher builds a dict of the keyword
// arguments and makes a new string per parameter name on every call, which costs more than
// the work of a short copy.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <initializer_list>
#include <new>
#include <span>
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

// Adds `def` (METH_FASTCALL | METH_KEYWORDS, kept alive by the caller) to class `cls` as
// a method: a method descriptor, which checks that `self` is an instance of `cls`.
inline void add_fast_method(pybind11::handle cls, PyMethodDef* def) {
    pybind11::object descr = pybind11::reinterpret_steal<pybind11::object>(
        PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(cls.ptr()), def));
    if (!descr) throw pybind11::error_already_set();
    pybind11::setattr(cls, def->ml_name, descr);
}

}  // namespace zehal::py
