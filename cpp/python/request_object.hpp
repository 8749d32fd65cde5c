// zehal.Request: the Python object of one submitted copy. A CPython type of its own rather
// than a pybind11 class: a round trip from Python makes and drops one per copy, and its
// deallocation runs between one copy's completion and the next copy's submission, where
// pybind11's generic instance teardown (and a separately allocated holder) would cost more
// than everything else the object does.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <memory>

#include "aml/request.hpp"

namespace zehal::py {

// Adds the Request type to `m` (once, at module initialization).
void bind_request(pybind11::module_& m);

// A new Request object (a new reference) for `request`. The copy's operands are the
// request's keep-alive, held by its engine until the copy is seen done, whether or not the
// object lives that long. Raises (returns null) only on allocation failure.
PyObject* new_request_object(std::shared_ptr<aml::Request> request);

}  // namespace zehal::py
