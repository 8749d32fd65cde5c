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

// The operands of a copy, kept alive while it may be pending: two references, no tuple. An
// operand of host memory from another exporter is a memoryview of it, whose export keeps
// the memory in place until dropped.
struct Operands {
    pybind11::object dst;
    pybind11::object src;
};

// Adds the Request type to `m` (once, at module initialization).
void bind_request(pybind11::module_& m);

// A new Request object (a new reference) for `request`, which keeps `keep` alive while the
// copy may be pending and, when dropped before the copy is seen done, hands them to
// `dma` (the zehal.Dma that submitted it). Raises (returns null) only on allocation failure.
PyObject* new_request_object(std::shared_ptr<aml::Request> request, Operands keep, PyObject* dma);

// Implemented by the Dma binding (bind_dma.cpp): `dma` (a zehal.Dma) holds `keep` until
// `request` completes. Called with the GIL held, by a Request object that goes first.
void adopt_operands(PyObject* dma, std::shared_ptr<aml::Request> request, Operands keep);

}  // namespace zehal::py
