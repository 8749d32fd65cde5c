// Dma from Python: asynchronous copies (their Request objects are request_object.cpp's,
// their operands kept alive by the engine: keep_alive.hpp), barriers without the GIL.
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "aml/area.hpp"
#include "aml/area/ze.h"
#include "aml/dma.hpp"
#include "aml/layout.hpp"
#include "aml/request.hpp"
#include "bindings.hpp"
#include "common/clock.hpp"
#include "hal/registry.hpp"
#include "python/buffer.hpp"
#include "python/deferred_release.hpp"
#include "python/fast_call.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/keep_alive.hpp"
#include "python/layout_object.hpp"
#include "python/request_object.hpp"
#include "python/submission.hpp"

namespace zehal::py {
namespace {

// --- Dma --------------------------------------------------------------------------------

// An optional Event argument: None is checked first, since pybind11's holder caster, given
// None, looks for a foreign module's type through a failing getattr (an AttributeError
// formatted and cleared on every call).
hal::EventRef optional_event(pyb::handle h, std::string_view what) {
    if (h.is_none()) return nullptr;
    if (!pyb::isinstance<hal::Event>(h)) throw pyb::type_error(std::string(what) + " must be a zehal.Event or None");
    if (!instance_of<hal::Event>(h.ptr())) throw pyb::type_error(std::string(what) + ": the event was not initialized");
    return h.cast<hal::EventRef>();
}

// One operand of Dma.copy, classified before any native state is read.
struct OperandArg {
    pyb::object obj;                   // what the copy keeps alive: the Buffer, the Layout, or a memoryview
    Buffer* buffer = nullptr;          // a zehal Buffer
    const PyLayout* layout = nullptr;  // else a Layout over one
                                       // else obj is a memoryview holding host memory's export
};

// The arguments of Dma.copy, converted from Python first: converting runs Python code
// (__index__, __bool__, an exporter's __buffer__), which may close the engine or an
// operand; what the copy reads of them is read afterwards (PyDma::copy).
struct CopyArgs {
    OperandArg dst;
    OperandArg src;
    bool whole_source = true;  // nbytes=None: the rest of src
    size_t nbytes = 0;
    size_t dst_offset = 0;
    size_t src_offset = 0;
    bool copy_1d = true;
    hal::EventRef signal;
};

// `obj` as an operand: a zehal Buffer or Layout as it is; any other object of the buffer
// protocol (a NumPy array, bytearray, memoryview: host memory, contract §2.2) through a
// memoryview of it, whose export keeps the memory from being freed or resized until the
// copy completes and the memoryview is dropped. A destination must be writable, and the
// memory contiguous.
OperandArg operand_arg(PyObject* obj, bool writable, std::string_view what) {
    OperandArg arg{pyb::reinterpret_borrow<pyb::object>(obj)};
    if ((arg.buffer = instance_of<Buffer>(obj))) return arg;
    if ((arg.layout = instance_of<PyLayout>(obj))) return arg;
    if (PyObject_TypeCheck(obj, type_of<Buffer>().type) || PyObject_TypeCheck(obj, type_of<PyLayout>().type))
        throw pyb::type_error(std::string(what) + ": the object was not initialized");
    if (!PyObject_CheckBuffer(obj))
        throw pyb::type_error(std::string(what) +
                              " must be a zehal.Buffer, a zehal.Layout or host memory of the buffer "
                              "protocol (a NumPy array, bytearray, memoryview), not " +
                              Py_TYPE(obj)->tp_name);
    arg.obj = pyb::reinterpret_steal<pyb::object>(PyMemoryView_FromObject(obj));
    if (!arg.obj) throw pyb::error_already_set();
    const Py_buffer& view = *PyMemoryView_GET_BUFFER(arg.obj.ptr());
    if (writable && view.readonly)
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT, std::string(what) + " is read-only memory (" + Py_TYPE(obj)->tp_name +
                                                    "); a copy needs a writable destination");
    if (!PyBuffer_IsContiguous(&view, 'A'))
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT, std::string(what) + " is not contiguous memory (" +
                                                    Py_TYPE(obj)->tp_name + "); copy it into a contiguous array first");
    return arg;
}

// An engine as Python holds it. Every command's operands are its keep-alive: the engine
// holds them until it sees the command done (fire-and-forget ones included) and gives them
// back, on whatever thread sees it, to be dropped where the GIL is held (keep_alive.hpp).
// Every method that may see commands done drops what they gave back before it returns.
class PyDma {
public:
    PyDma(const hal::DeviceRef& device, pyb::handle ordinal, pyb::handle index) {
        const auto o = int_arg<uint32_t>(ordinal, "Dma: ordinal");
        const auto i = int_arg<uint32_t>(index, "Dma: index");
        check(aml::Dma::create(device_or_default(device), o, i, &dma_), "Dma");
    }
    // Waits for every copy before the operands of fire-and-forget ones are dropped.
    ~PyDma() { close(); }
    PyDma(const PyDma&) = delete;
    PyDma& operator=(const PyDma&) = delete;

    // The default engine: copy engine 0 of the default device (compute engine 0 without
    // copy engines), as aml_dma_ze_default.
    static std::unique_ptr<PyDma> make_default() {
        hal::DeviceRef device = device_or_default(nullptr);
        const uint32_t ordinal = device->properties().copy_engines > 0 ? hal::kCopyOrdinal : hal::kComputeOrdinal;
        return std::make_unique<PyDma>(device, pyb::int_(ordinal), pyb::int_(0));
    }

    // Submits the copy of `args` (converted beforehand: no Python code runs from here to the
    // submission, so the engine and operands read here are those the copy uses), its
    // operands as its keep-alive. Returns its request with `want_request`, else null.
    std::shared_ptr<aml::Request> copy(CopyArgs& args, bool want_request) {
        aml::Dma& dma = live("Dma.copy");
        Operand d = operand(args.dst, "Dma.copy: dst");
        Operand s = operand(args.src, "Dma.copy: src");
        if (args.copy_1d && (!d.one_d || !s.one_d))
            check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "Dma.copy: copy_1D needs one-dimensional layouts of unit stride");
        d.advance(args.dst_offset, "dst_offset");
        s.advance(args.src_offset, "src_offset");
        const size_t n = args.whole_source ? s.bytes : args.nbytes;
        if (n > s.bytes || n > d.bytes)
            check(ZE_RESULT_ERROR_INVALID_SIZE, "Dma.copy: " + std::to_string(n) + " bytes from a source of " +
                                                    std::to_string(s.bytes) + " into a destination of " +
                                                    std::to_string(d.bytes));
        const std::array<Buffer*, 2> users{d.buffer, s.buffer};
        aml::Request::KeepAlive keep = make_keep_alive(Operands{std::move(args.dst.obj), std::move(args.src.obj)},
                                                       users, dma_);
        std::shared_ptr<aml::Request> request;
        if (ze_result_t r = dma.copy(d.ptr, s.ptr, n, want_request ? &request : nullptr, args.signal, std::move(keep));
            r != ZE_RESULT_SUCCESS)
            check(r, "Dma.copy" + copy_failure(dma, d, s, args.signal, r));
        return request;
    }

    // Submits `s` (a command other than a copy) as copy() submits a copy: its operands are
    // its keep-alive, and the Buffers it uses wait for it when closed.
    std::shared_ptr<aml::Request> submit(Submission& s, bool want_request) {
        aml::Dma& dma = live(s.what);
        aml::Request::KeepAlive keep = make_keep_alive(std::move(s.operands), s.users, dma_);
        std::shared_ptr<aml::Request> request;
        if (ze_result_t r = s.append(dma, want_request ? &request : nullptr, std::move(keep)); r != ZE_RESULT_SUCCESS)
            check(r, s.what);
        return request;
    }

    // The engine's barrier, without the GIL (the C API's: one barrier).
    void barrier() {
        ReleaseDeferredOnExit release;
        // Our own reference: a close() from another thread may drop dma_ while we wait.
        const std::shared_ptr<aml::Dma> dma = dma_;
        if (!dma) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "Dma.barrier: the engine is closed");
        check(without_gil([&] { return dma->barrier(); }), "Dma.barrier");
    }

    // Any number of threads may close at once, or close while another waits in barrier():
    // each holds its own reference and returns once every copy completed, so the operands
    // of fire-and-forget copies are dropped only then.
    void close() {
        ReleaseDeferredOnExit release;
        const std::shared_ptr<aml::Dma> dma = dma_;
        if (!dma) return;
        without_gil([&] { dma->close(); });
        // Closed before the operands are dropped (on the way out): dropping one may run
        // Python code (a finalizer, an exporter's release), which then finds the engine
        // closed and this object consistent.
        dma_.reset();
    }

    bool closed() const { return !dma_; }
    aml::Dma& live(std::string_view what) {
        if (!dma_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the engine is closed");
        return *dma_;
    }
    size_t pending() {
        ReleaseDeferredOnExit release;
        return live("Dma.pending").pending();
    }

private:
    // A copy operand as the engine sees it.
    struct Operand {
        void* ptr;
        size_t bytes;    // what the copy may touch
        bool one_d;      // usable by copy_1D
        Buffer* buffer;  // the zehal Buffer it is in; null for memory of another exporter

        // Skips the first `offset` bytes (at most all of them).
        void advance(size_t offset, std::string_view what) {
            if (offset > bytes)
                check(ZE_RESULT_ERROR_INVALID_SIZE, "Dma.copy: " + std::string(what) + " " + std::to_string(offset) +
                                                        " is past the end (" + std::to_string(bytes) + " bytes)");
            ptr = static_cast<char*>(ptr) + offset;
            bytes -= offset;
        }
    };

    // Why a copy was refused, for the message: the operand (or event) that does not belong
    // to the engine's device, named with where it lives. Host memory of any backend is
    // never the reason (contract §2.2), nor a peer's device memory that the engine's device
    // copies: only device and shared memory of a device of another backend has no path.
    static std::string copy_failure(aml::Dma& dma, const Operand& d, const Operand& s, const hal::EventRef& signal,
                                    ze_result_t r) {
        if (r != ZE_RESULT_ERROR_INVALID_ARGUMENT) return {};
        const hal::Device* engine = dma.device().get();
        auto where = [](const Operand& o) {
            if (!o.buffer) return std::string("host memory of another exporter");
            return std::string(o.buffer->kind() == hal::MemoryKind::host     ? "host"
                               : o.buffer->kind() == hal::MemoryKind::device ? "device"
                                                                             : "shared") +
                   " memory of " + o.buffer->device()->properties().name + " (" +
                   std::string(o.buffer->device()->backend_name()) + ")";
        };
        const std::string on = " the engine runs on " + engine->properties().name + " (" +
                               std::string(engine->backend_name()) + ")";
        for (const auto& [name, o] : {std::pair<const char*, const Operand*>{"dst", &d}, {"src", &s}})
            if (o->buffer && o->buffer->kind() != hal::MemoryKind::host && o->buffer->device().get() != engine &&
                !engine->copies_peer_memory(*o->buffer->device()))
                return ": " + std::string(name) + " is " + where(*o) + ";" + on +
                       ", and device or shared memory is usable only by devices of its own backend";
        if (signal) return ": signal may be an event of another device;" + on;
        return {};
    }

    // The operand `arg` names, read now (after every Python argument was converted):
    // InvalidArgumentError for a closed buffer, or one a close() is waiting on.
    static Operand operand(const OperandArg& arg, std::string_view what) {
        if (arg.buffer) return {arg.buffer->for_copy(what), arg.buffer->nbytes(), true, arg.buffer};
        if (arg.layout) {
            const PyLayout& l = *arg.layout;
            l.buffer->for_copy(what);
            const bool one_d = l.layout->ndims() == 1 && l.layout->contiguous();
            return {l.layout->rawptr(), l.layout->extent_bytes(), one_d, l.buffer.get()};
        }
        const Py_buffer& view = *PyMemoryView_GET_BUFFER(arg.obj.ptr());
        return {view.buf, static_cast<size_t>(view.len), true, nullptr};
    }

    std::shared_ptr<aml::Dma> dma_;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyDma)

namespace zehal::py {
namespace {

// `request` as pybind11 reads a bool: True, False, None (false), or an object with
// __bool__ (numpy.bool_); anything else is a TypeError. `absent` when not given.
bool bool_arg(PyObject* o, bool absent, std::string_view what) {
    if (!o) return absent;
    if (o == Py_True) return true;
    if (o == Py_False || o == Py_None) return false;
    if (PyNumberMethods* n = Py_TYPE(o)->tp_as_number; n && n->nb_bool) {
        const int t = n->nb_bool(o);
        if (t < 0) throw pyb::error_already_set();
        return t != 0;
    }
    throw pyb::type_error(std::string(what) + " must be True or False");
}

// Whether `op` (a str, or null for the default) names copy_1D rather than memcpy;
// INVALID_ENUMERATION for any other name.
bool is_copy_1d(PyObject* op) {
    if (!op || PyUnicode_CompareWithASCIIString(op, "copy_1D") == 0) return true;
    if (PyUnicode_CompareWithASCIIString(op, "memcpy") == 0) return false;
    Py_ssize_t n = 0;
    const char* name = PyUnicode_AsUTF8AndSize(op, &n);
    if (!name) throw pyb::error_already_set();
    check(ZE_RESULT_ERROR_INVALID_ENUMERATION,
          "Dma.copy: op must be 'copy_1D' or 'memcpy', not '" + std::string(name, static_cast<size_t>(n)) + "'");
    return false;
}

// The arguments of Dma.copy (slots of dst, src, nbytes, op, request, signal, dst_offset,
// src_offset), every one converted before the copy reads the engine or an operand.
CopyArgs copy_args(const std::array<PyObject*, 8>& a) {
    CopyArgs c;
    if (a[3]) {
        if (!PyUnicode_Check(a[3])) throw pyb::type_error("Dma.copy: op must be 'copy_1D' or 'memcpy'");
        c.copy_1d = is_copy_1d(a[3]);
    }
    c.signal = optional_event(a[5] ? a[5] : Py_None, "Dma.copy: signal");
    if (a[2] && a[2] != Py_None) {
        c.whole_source = false;
        c.nbytes = int_arg<size_t>(a[2], "Dma.copy: nbytes", ZE_RESULT_ERROR_INVALID_SIZE);
    }
    if (a[6]) c.dst_offset = int_arg<size_t>(a[6], "Dma.copy: dst_offset", ZE_RESULT_ERROR_INVALID_SIZE);
    if (a[7]) c.src_offset = int_arg<size_t>(a[7], "Dma.copy: src_offset", ZE_RESULT_ERROR_INVALID_SIZE);
    c.dst = operand_arg(a[0], true, "Dma.copy: dst");
    c.src = operand_arg(a[1], false, "Dma.copy: src");
    return c;
}

// Dma.copy through vectorcall (fast_call.hpp): a fire-and-forget copy is called with a
// keyword, which pybind11's dispatcher makes the costliest part of the call.
PyObject* dma_copy(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const FastParams params({"dst", "src", "nbytes", "op", "request", "signal", "dst_offset", "src_offset"}, 3,
                                   2);
    return fast_call<8>(params, "Dma.copy()", args, nargs, kwnames, [&](const auto& a) -> PyObject* {
        ReleaseDeferredOnExit release;  // the operands of older copies the submission saw done
        PyDma& dma = self_of<PyDma>(self, "Dma.copy");
        const bool want_request = bool_arg(a[4], true, "Dma.copy: request");
        CopyArgs c = copy_args(a);
        std::shared_ptr<aml::Request> request = dma.copy(c, want_request);
        if (!want_request) Py_RETURN_NONE;
        return new_request_object(std::move(request));
    });
}

// Dma.barrier(), called directly (METH_NOARGS): the other half of a fire-and-forget copy.
PyObject* dma_barrier(PyObject* self, PyObject*) {
    return fast_call_guarded([&]() -> PyObject* {
        self_of<PyDma>(self, "Dma.barrier").barrier();
        Py_RETURN_NONE;
    });
}

PyMethodDef kDmaBarrierDef = {
    "barrier", &dma_barrier, METH_NOARGS,
    "barrier($self)\n--\n\n"
    "Waits (without the GIL) until every copy submitted before it completed, fire-and-forget ones too."};

PyMethodDef kDmaCopyDef = {
    "copy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&dma_copy)), METH_FASTCALL | METH_KEYWORDS,
    "copy($self, dst, src, nbytes=None, *, op='copy_1D', request=True, signal=None, dst_offset=0, src_offset=0)\n"
    "--\n\n"
    "Copies src into dst (Buffers, one-dimensional Layouts for copy_1D, or host memory of the buffer protocol: a "
    "NumPy array, bytearray, memoryview, held until the copy completes) and returns at once: a Request, or None "
    "with request=False (fire-and-forget: barrier() waits for it). nbytes: bytes to copy (None: the rest of src; "
    "must fit both). op: 'copy_1D' or 'memcpy'. signal: an Event the copy itself signals. dst_offset, src_offset: "
    "bytes skipped at the start of each operand."};

}  // namespace

PyObject* submit_on_dma(PyObject* dma, Submission submission, bool want_request) {
    ReleaseDeferredOnExit release;  // the operands of older commands the submission saw done
    PyDma& engine = self_of<PyDma>(dma, "Dma.launch");
    std::shared_ptr<aml::Request> request = engine.submit(submission, want_request);
    if (!want_request) Py_RETURN_NONE;
    return new_request_object(std::move(request));
}

void bind_dma(pyb::module_& m) {
    bind_request(m);
    install_deferred_release();
    pyb::class_<PyDma> dma_class =
        pyb::class_<PyDma>(m, "Dma",
                           "An engine: asynchronous copies on engine `index` of engine group `ordinal` (1: copy "
                           "engines, 0: compute engines) of a device. Copies complete in submission order; many "
                           "threads may submit at once.")
            .def(pyb::init<const hal::DeviceRef&, pyb::handle, pyb::handle>(), pyb::arg("device") = pyb::none(),
                 pyb::arg("ordinal") = 1, pyb::arg("index") = 0)
            .def_static("default", &PyDma::make_default,
                        "An engine as aml_dma_ze_default: copy engine 0 of the default device.")
            .def_property_readonly("pending", &PyDma::pending,
                                   "Copies with a request that have not completed (asked at once).")
            .def_property_readonly(
                "device", [](PyDma& d) { return d.live("Dma.device").device(); }, "The device.")
            .def_property_readonly(
                "ordinal", [](PyDma& d) { return d.live("Dma.ordinal").ordinal(); }, "Engine group.")
            .def_property_readonly(
                "index", [](PyDma& d) { return d.live("Dma.index").index(); }, "Engine index.")
            .def_property_readonly("closed", &PyDma::closed, "True after close().")
            .def("close", &PyDma::close, "Waits for every copy, then releases the engine. Idempotent.")
            .def("__enter__", &enter<PyDma>)
            .def("__exit__", [](PyDma& d, pyb::args) { d.close(); })
            .def("__repr__", [](PyDma& d) {
                if (d.closed()) return std::string("<zehal.Dma closed>");
                aml::Dma& dma = d.live("Dma");
                return "<zehal.Dma ordinal=" + std::to_string(dma.ordinal()) + " index=" + std::to_string(dma.index()) +
                       " on " + std::string(dma.device()->backend_name()) + ">";
            });
    add_fast_method(dma_class, &kDmaCopyDef);
    add_fast_method(dma_class, &kDmaBarrierDef);
}

}  // namespace zehal::py
