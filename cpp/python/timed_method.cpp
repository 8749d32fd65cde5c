// _zehal._TimedMethod(name, method): `method` (unbound: self first) timed as host API call
// `name` while a trace records them (RankStream.start(api_calls=True)); zehal.api_calls puts
// one in place of each instance method of the API's classes while a trace runs. It is a native descriptor that calls like a function (Py_TPFLAGS_METHOD_DESCRIPTOR),
// so `obj.method(...)` reaches its vectorcall with `obj` first and no bound method is made:
// a call costs an ApiCallScope (two clock reads and a push on the thread's ring) and one
// more vectorcall, and no Python frame.
#include <structmember.h>

#include <cstddef>
#include <string>

#include "common/api_call_log.hpp"
#include "python/bindings.hpp"

namespace zehal::py {
namespace {

struct TimedMethod {
    PyObject_HEAD PyObject* method;  // the callable timed: an unbound method, self first
    PyObject* name;                  // str, "Class.method"
    uint32_t id;                     // the name in the API call log
    vectorcallfunc vectorcall;
};

TimedMethod* as_timed(PyObject* self) { return reinterpret_cast<TimedMethod*>(self); }

PyObject* timed_vectorcall(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
    TimedMethod* t = as_timed(self);
    const ApiCallScope scope(t->id);
    return PyObject_Vectorcall(t->method, args, nargsf, kwnames);
}

PyObject* timed_new(PyTypeObject* type, PyObject* args, PyObject* kwargs) {
    static const char* kKeywords[] = {"name", "method", nullptr};
    PyObject* name = nullptr;
    PyObject* method = nullptr;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "UO:_TimedMethod", const_cast<char**>(kKeywords), &name, &method))
        return nullptr;
    if (!PyCallable_Check(method)) {
        PyErr_SetString(PyExc_TypeError, "_TimedMethod: method must be callable");
        return nullptr;
    }
    Py_ssize_t size = 0;
    const char* text = PyUnicode_AsUTF8AndSize(name, &size);
    if (!text) return nullptr;
    const uint32_t id = api_call_log::intern(std::string_view(text, static_cast<size_t>(size)));
    if (id == api_call_log::kUnknownName) return PyErr_NoMemory();
    auto* t = as_timed(type->tp_alloc(type, 0));
    if (!t) return nullptr;
    t->method = Py_NewRef(method);
    t->name = Py_NewRef(name);
    t->id = id;
    t->vectorcall = &timed_vectorcall;
    return reinterpret_cast<PyObject*>(t);
}

int timed_traverse(PyObject* self, visitproc visit, void* arg) {
    Py_VISIT(Py_TYPE(self));  // a heap type: its instances hold it
    Py_VISIT(as_timed(self)->method);
    Py_VISIT(as_timed(self)->name);
    return 0;
}

int timed_clear(PyObject* self) {
    Py_CLEAR(as_timed(self)->method);
    Py_CLEAR(as_timed(self)->name);
    return 0;
}

void timed_dealloc(PyObject* self) {
    PyTypeObject* type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    timed_clear(self);
    type->tp_free(self);
    Py_DECREF(type);
}

// As a function's __get__: the descriptor itself from the class, a bound method from an instance.
PyObject* timed_get(PyObject* self, PyObject* obj, PyObject*) {
    if (!obj || obj == Py_None) return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

PyObject* timed_repr(PyObject* self) { return PyUnicode_FromFormat("<zehal timed method %U>", as_timed(self)->name); }

// __doc__, __name__ and __qualname__ of the method timed, so help() reads as without timing.
PyObject* timed_attr(PyObject* self, void* attr) {
    return PyObject_GetAttrString(as_timed(self)->method, static_cast<const char*>(attr));
}

PyGetSetDef kTimedGetSet[] = {
    {"__doc__", &timed_attr, nullptr, nullptr, const_cast<char*>("__doc__")},
    {"__name__", &timed_attr, nullptr, nullptr, const_cast<char*>("__name__")},
    {"__qualname__", &timed_attr, nullptr, nullptr, const_cast<char*>("__qualname__")},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyMemberDef kTimedMembers[] = {
    {"__wrapped__", T_OBJECT, offsetof(TimedMethod, method), READONLY, "The method timed."},
    {"api_name", T_OBJECT, offsetof(TimedMethod, name), READONLY, "The name its calls have in a trace."},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(TimedMethod, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr},
};

PyType_Slot kTimedSlots[] = {
    {Py_tp_new, reinterpret_cast<void*>(&timed_new)},
    {Py_tp_dealloc, reinterpret_cast<void*>(&timed_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void*>(&timed_traverse)},
    {Py_tp_clear, reinterpret_cast<void*>(&timed_clear)},
    {Py_tp_descr_get, reinterpret_cast<void*>(&timed_get)},
    {Py_tp_call, reinterpret_cast<void*>(&PyVectorcall_Call)},
    {Py_tp_repr, reinterpret_cast<void*>(&timed_repr)},
    {Py_tp_getset, kTimedGetSet},
    {Py_tp_members, kTimedMembers},
    {0, nullptr},
};

PyType_Spec kTimedSpec = {
    "zehal._zehal._TimedMethod",
    sizeof(TimedMethod),
    0,
    Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL | Py_TPFLAGS_METHOD_DESCRIPTOR,
    kTimedSlots,
};

}  // namespace

void bind_timed_method(pyb::module_& m) {
    PyObject* type = PyType_FromSpec(&kTimedSpec);
    if (!type) throw pyb::error_already_set();
    m.attr("_TimedMethod") = pyb::reinterpret_steal<pyb::object>(type);
}

}  // namespace zehal::py
