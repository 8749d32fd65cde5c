#include "python/request_object.hpp"

#include <structmember.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "aml/dma/ze.h"
#include "bindings.hpp"
#include "common/clock.hpp"
#include "python/fast_call.hpp"
#include "python/deferred_release.hpp"
#include "python/gil.hpp"
#include "python/interruptible_wait.hpp"

namespace zehal::py {
namespace {

// The object: CPython's header, then what a request holds. Its members are constructed by
// new_request_object and destroyed by request_dealloc (the type has no other constructor).
struct RequestObject {
    PyObject_HEAD PyObject* weakrefs;       // CPython's list of weak references, or null
    std::shared_ptr<aml::Request> request;  // never null
};
// offsetof (the weak-reference list's place, for CPython) is defined on standard layouts.
static_assert(std::is_standard_layout_v<RequestObject>);

// The type, made once by bind_request and kept for the life of the process.
PyTypeObject* g_request_type = nullptr;

RequestObject& state_of(PyObject* self) { return *reinterpret_cast<RequestObject*>(self); }

// A `timeout` argument in seconds as pybind11 reads an optional float: None (or absent),
// or any object float() takes without a string (an int, numpy.float32, ...).
std::optional<double> optional_seconds(PyObject* o, std::string_view what) {
    if (!o || o == Py_None) return std::nullopt;
    if (!PyFloat_Check(o) && !PyIndex_Check(o) && !(Py_TYPE(o)->tp_as_number && Py_TYPE(o)->tp_as_number->nb_float))
        throw pyb::type_error(std::string(what) + " must be a number of seconds or None");
    const double v = PyFloat_AsDouble(o);
    if (v == -1.0 && PyErr_Occurred()) throw pyb::error_already_set();
    return v;
}

// Waits for the copy; the operands its completion released are dropped before the return.
void wait(RequestObject& r, const std::optional<double>& timeout) {
    ReleaseDeferredOnExit release;
    // A copy already complete needs no wait: no release and retaking of the GIL, no clock
    // reads (a short copy is often done by the time Python asks). A bad timeout is refused
    // either way.
    timeout_ns(timeout, "Request.wait");
    if (!r.request->done()) {
        aml::Request& request = *r.request;
        const ze_result_t w = interruptible_wait(timeout, "Request.wait",
                                                 [&](uint64_t slice) { return request.wait(slice); });
        if (w == ZE_RESULT_NOT_READY) check(w, "Request.wait: timed out");
    }
    check(r.request->result(), "Request.wait: the copy failed");
}

void cancel(RequestObject& r) {
    ReleaseDeferredOnExit release;
    aml::Request& request = *r.request;
    const ze_result_t c = without_gil([&] { return request.cancel(); });
    check(c, "Request.cancel");
}

// Request.wait through vectorcall: the other half of a round trip from Python.
PyObject* request_wait(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const FastParams params({"timeout"}, 1);
    return fast_call<1>(params, "Request.wait()", args, nargs, kwnames, [&](const auto& a) -> PyObject* {
        wait(state_of(self), optional_seconds(a[0], "Request.wait: timeout"));
        Py_RETURN_NONE;
    });
}

PyObject* request_cancel(PyObject* self, PyObject*) {
    return fast_call_guarded([&]() -> PyObject* {
        cancel(state_of(self));
        Py_RETURN_NONE;
    });
}

PyObject* request_enter(PyObject* self, PyObject*) {
    Py_INCREF(self);
    return self;
}

// __exit__(type, value, traceback): waits for the copy when the block ended normally, else
// cancels it (an exception inside the block is never swallowed).
PyObject* request_exit(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
    if (nargs != 3) {
        PyErr_Format(PyExc_TypeError, "Request.__exit__() takes 3 arguments (%zd given)", nargs);
        return nullptr;
    }
    return fast_call_guarded([&]() -> PyObject* {
        if (args[0] == Py_None)
            wait(state_of(self), std::nullopt);
        else
            cancel(state_of(self));
        Py_RETURN_NONE;
    });
}

PyObject* request_done(PyObject* self, void*) {
    return fast_call_guarded([&]() -> PyObject* {
        ReleaseDeferredOnExit release;
        return PyBool_FromLong(state_of(self).request->done());
    });
}

PyObject* request_flags(PyObject* self, void*) {
    return fast_call_guarded([&]() -> PyObject* {
        ReleaseDeferredOnExit release;
        return PyLong_FromLong(state_of(self).request->flags());
    });
}

PyObject* request_cancelled(PyObject* self, void*) { return PyBool_FromLong(state_of(self).request->cancelled()); }

PyObject* request_repr(PyObject* self) {
    return fast_call_guarded([&]() -> PyObject* {
        return PyUnicode_FromString(state_of(self).request->done() ? "<zehal.Request done>"
                                                                   : "<zehal.Request pending>");
    });
}

// Runs between one copy's completion and the next copy's submission in a round trip: the
// request itself stays listed by its engine (which holds the operands while it is
// pending), and is torn down after the engine's next submission.
void request_dealloc(PyObject* self) {
    RequestObject& r = state_of(self);
    PyTypeObject* type = Py_TYPE(self);
    if (r.weakrefs) PyObject_ClearWeakRefs(self);
    r.request.~shared_ptr();
    type->tp_free(self);
    Py_DECREF(type);  // (instances of a heap type hold a reference to it)
}

PyMethodDef kMethods[] = {
    {"wait", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&request_wait)), METH_FASTCALL | METH_KEYWORDS,
     "wait($self, timeout=None)\n--\n\n"
     "Waits until the copy completed (timeout in seconds; None: forever). NotReadyError on timeout; raises the "
     "copy's error (DeviceLostError, ...)."},
    {"cancel", &request_cancel, METH_NOARGS,
     "cancel($self)\n--\n\n"
     "Removes the copy from its queue if it has not started, else waits for it. Does nothing once done."},
    {"__enter__", &request_enter, METH_NOARGS, "__enter__($self)\n--\n\nThe request itself."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&request_exit)), METH_FASTCALL,
     "__exit__($self, *args)\n--\n\nWaits for the copy; cancels it when the block raised."},
    {nullptr, nullptr, 0, nullptr},
};

PyGetSetDef kProperties[] = {
    {"done", &request_done, nullptr, "True once the copy completed or was cancelled (queried live).", nullptr},
    {"flags", &request_flags, nullptr, "AML_DMA_ZE_REQUEST_FLAGS_PENDING (0) or _DONE (1), queried live.", nullptr},
    {"cancelled", &request_cancelled, nullptr, "True when cancel() removed the copy before it ran.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMemberDef kMembers[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(RequestObject, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

}  // namespace

PyObject* new_request_object(std::shared_ptr<aml::Request> request) {
    PyObject* obj = g_request_type->tp_alloc(g_request_type, 0);
    if (!obj) return nullptr;
    RequestObject& r = state_of(obj);
    r.weakrefs = nullptr;
    new (&r.request) std::shared_ptr<aml::Request>(std::move(request));
    return obj;
}

void bind_request(pyb::module_& m) {
    static char doc[] = "A submitted copy. Its engine keeps the operands alive until the copy is seen done. wait() is "
                        "idempotent and releases the GIL; "
                        "after cancel(), done is True and wait() returns at once.";
    PyType_Slot slots[] = {
        {Py_tp_doc, doc},
        {Py_tp_dealloc, reinterpret_cast<void*>(&request_dealloc)},
        {Py_tp_repr, reinterpret_cast<void*>(&request_repr)},
        {Py_tp_methods, kMethods},
        {Py_tp_getset, kProperties},
        {Py_tp_members, kMembers},
        {0, nullptr},
    };
    PyType_Spec spec = {"zehal._zehal.Request", static_cast<int>(sizeof(RequestObject)), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, slots};
    auto type = pyb::reinterpret_steal<pyb::object>(PyType_FromSpec(&spec));
    if (!type) throw pyb::error_already_set();
    type.attr("FLAGS_PENDING") = pyb::int_(AML_DMA_ZE_REQUEST_FLAGS_PENDING);
    type.attr("FLAGS_DONE") = pyb::int_(AML_DMA_ZE_REQUEST_FLAGS_DONE);
    m.add_object("Request", type);
    g_request_type = reinterpret_cast<PyTypeObject*>(type.release().ptr());  // kept for good
}

}  // namespace zehal::py
