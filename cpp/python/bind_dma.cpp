// Dma and Request from Python: asynchronous copies, waits without the GIL, barriers.
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aml/area.hpp"
#include "aml/area/ze.h"
#include "aml/dma.hpp"
#include "aml/layout.hpp"
#include "aml/request.hpp"
#include "bindings.hpp"
#include "common/clock.hpp"
#include "hal/registry.hpp"
#include "python/buffer.hpp"
#include "python/fast_call.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/interruptible_wait.hpp"
#include "python/layout_object.hpp"

namespace zehal::py {
namespace {

// --- Dma and Request ------------------------------------------------------------------

// An optional Event argument: None is checked first, since pybind11's holder caster, given
// None, looks for a foreign module's type through a failing getattr (an AttributeError
// formatted and cleared on every call).
hal::EventRef optional_event(pyb::handle h, std::string_view what) {
    if (h.is_none()) return nullptr;
    if (!pyb::isinstance<hal::Event>(h)) throw pyb::type_error(std::string(what) + " must be a zehal.Event or None");
    return h.cast<hal::EventRef>();
}

// A copy's operands (dst, src), kept alive while it may be pending: two references, no
// tuple to allocate.
struct Operands {
    pyb::object dst;
    pyb::object src;
};

// A request as Python holds it: the copy's operands stay alive until it is done.
class PyRequest {
public:
    PyRequest(std::shared_ptr<aml::Request> request, Operands keep)
        : request_(std::move(request)), keep_(std::move(keep)) {}

    void wait(const std::optional<double>& timeout) {
        // A copy already complete needs no wait: no release and retaking of the GIL, no
        // clock reads (a short copy is often done by the time Python asks). A bad timeout
        // is refused either way.
        timeout_ns(timeout, "Request.wait");
        if (!request_->done()) wait_slices(timeout, "Request.wait");
        release_if_done();
        check(request_->result(), "Request.wait: the copy failed");
    }
    void cancel() {
        ze_result_t r;
        r = without_gil([&] { return request_->cancel(); });
        release_if_done();
        check(r, "Request.cancel");
    }
    bool done() {
        const bool d = request_->done();
        if (d) keep_ = {};
        return d;
    }
    int flags() {
        const int f = request_->flags();
        if (f == AML_DMA_ZE_REQUEST_FLAGS_DONE) keep_ = {};
        return f;
    }
    bool cancelled() const { return request_->cancelled(); }
    const std::shared_ptr<aml::Request>& request() const { return request_; }
    // What must outlive the copy, for the engine to hold when this object goes first.
    Operands take_keep() { return std::exchange(keep_, Operands{}); }

private:
    void release_if_done() {
        if (request_->done()) keep_ = {};
    }
    // Waits for the copy (interruptible, without the GIL); raises when timed out.
    void wait_slices(const std::optional<double>& seconds, std::string_view what) {
        const ze_result_t r = interruptible_wait(seconds, what, [&](uint64_t slice) { return request_->wait(slice); });
        if (r == ZE_RESULT_NOT_READY) check(r, std::string(what) + ": timed out");
    }

    std::shared_ptr<aml::Request> request_;
    Operands keep_;  // while the copy may be pending
};

// An engine as Python holds it. Fire-and-forget copies are tracked too, so that their
// operands live until they complete (dropped as they are seen done, at the latest by the
// next barrier).
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

    std::optional<PyRequest> copy(pyb::object dst, pyb::object src, pyb::handle nbytes, const std::string& op,
                                  bool want_request, const hal::EventRef& signal, pyb::handle dst_offset,
                                  pyb::handle src_offset) {
        aml::Dma& dma = live("Dma.copy");
        Operand d = operand(dst, "Dma.copy: dst");
        Operand s = operand(src, "Dma.copy: src");
        if (op == "copy_1D") {
            if (!d.one_d || !s.one_d)
                check(ZE_RESULT_ERROR_INVALID_ARGUMENT,
                      "Dma.copy: copy_1D needs one-dimensional layouts of unit stride");
        } else if (op != "memcpy") {
            check(ZE_RESULT_ERROR_INVALID_ENUMERATION, "Dma.copy: op must be 'copy_1D' or 'memcpy', not '" + op + "'");
        }
        d.advance(int_arg<size_t>(dst_offset, "Dma.copy: dst_offset", ZE_RESULT_ERROR_INVALID_SIZE), "dst_offset");
        s.advance(int_arg<size_t>(src_offset, "Dma.copy: src_offset", ZE_RESULT_ERROR_INVALID_SIZE), "src_offset");
        const size_t n =
            nbytes.is_none() ? s.bytes : int_arg<size_t>(nbytes, "Dma.copy: nbytes", ZE_RESULT_ERROR_INVALID_SIZE);
        if (n > s.bytes || n > d.bytes)
            check(ZE_RESULT_ERROR_INVALID_SIZE, "Dma.copy: " + std::to_string(n) + " bytes from a source of " +
                                                    std::to_string(s.bytes) + " into a destination of " +
                                                    std::to_string(d.bytes));
        std::shared_ptr<aml::Request> request;
        if (ze_result_t r = dma.copy(d.ptr, s.ptr, n, &request, signal); r != ZE_RESULT_SUCCESS)
            check(r, "Dma.copy" + copy_failure(dma, d, s, signal, r));
        d.buffer->add_user(request);
        s.buffer->add_user(request);
        newest_ = request;
        Operands keep{std::move(dst), std::move(src)};
        reap();
        if (want_request) return PyRequest(std::move(request), std::move(keep));
        detached_.push_back({std::move(request), std::move(keep)});
        return std::nullopt;
    }

    void barrier() {
        // Our own reference: a close() from another thread may drop dma_ while we wait.
        const std::shared_ptr<aml::Dma> dma = dma_;
        if (!dma) live("Dma.barrier");
        // Copies of one engine complete in submission order (its queue is in order, and
        // every copy is submitted under the GIL): once the newest copy is done, so is every
        // copy before it, and no barrier command is needed. poll() then records the others
        // as done. A cancelled or failed newest copy, or none, takes the full barrier.
        // newest_ stays: the next copy drops it once that copy is submitted, so the
        // request's teardown is not between this barrier and that submission.
        const std::shared_ptr<aml::Request> newest = newest_;
        ze_result_t r = ZE_RESULT_ERROR_UNKNOWN;
        if (newest && !newest->cancelled())
            r = newest->done() ? newest->result() : without_gil([&] { return newest->wait(kWaitForever); });
        if (r == ZE_RESULT_SUCCESS && !newest->cancelled())  // (cancelled while we waited)
            dma->poll();
        else
            r = without_gil([&] { return dma->barrier(); });
        reap();
        check(r, "Dma.barrier");
    }

    // Any number of threads may close at once, or close while another waits in barrier():
    // each holds its own reference and returns once every copy completed, so the operands
    // of fire-and-forget copies are dropped only then.
    void close() {
        const std::shared_ptr<aml::Dma> dma = dma_;
        if (!dma) return;
        without_gil([&] { dma->close(); });
        detached_.clear();
        newest_.reset();
        dma_.reset();
    }

    // Holds `keep` until `request` completes (a Request object that goes before its copy).
    void adopt(std::shared_ptr<aml::Request> request, Operands keep) {
        if (dma_ && !request->done()) detached_.push_back({std::move(request), std::move(keep)});
    }

    bool closed() const { return !dma_; }
    aml::Dma& live(std::string_view what) {
        if (!dma_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the engine is closed");
        return *dma_;
    }
    size_t pending() {
        aml::Dma& dma = live("Dma.pending");
        reap();
        return dma.pending();
    }

private:
    // A copy operand: a Buffer, or a Layout over one.
    struct Operand {
        void* ptr;
        size_t bytes;  // what the copy may touch
        bool one_d;    // usable by copy_1D
        Buffer* buffer;

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
    // never the reason (contract §2.2): only device and shared memory are tied to a device.
    static std::string copy_failure(aml::Dma& dma, const Operand& d, const Operand& s, const hal::EventRef& signal, ze_result_t r) {
        if (r != ZE_RESULT_ERROR_INVALID_ARGUMENT) return {};
        const hal::Device* engine = dma.device().get();
        auto where = [](const Operand& o) {
            return std::string(o.buffer->kind() == hal::MemoryKind::host ? "host" : o.buffer->kind() == hal::MemoryKind::device
                                                                                       ? "device"
                                                                                       : "shared") +
                   " memory of " + o.buffer->device()->properties().name + " (" +
                   std::string(o.buffer->device()->backend_name()) + ")";
        };
        const std::string on = " the engine runs on " + engine->properties().name + " (" +
                               std::string(engine->backend_name()) + ")";
        for (const auto& [name, o] : {std::pair<const char*, const Operand*>{"dst", &d}, {"src", &s}})
            if (o->buffer->kind() != hal::MemoryKind::host && o->buffer->device().get() != engine)
                return ": " + std::string(name) + " is " + where(*o) + ";" + on +
                       ", and device or shared memory is usable only by its own device";
        if (signal) return ": signal may be an event of another device;" + on;
        return {};
    }

    static Operand operand(pyb::handle obj, std::string_view what) {
        if (Buffer* b = instance_of<Buffer>(obj.ptr())) return {b->live(what), b->nbytes(), true, b};
        if (const PyLayout* layout = instance_of<PyLayout>(obj.ptr())) {
            const PyLayout& l = *layout;
            l.buffer->live(what);
            const bool one_d = l.layout->ndims() == 1 && l.layout->contiguous();
            return {l.layout->rawptr(), l.layout->extent_bytes(), one_d, l.buffer.get()};
        }
        throw pyb::type_error(std::string(what) + " must be a zehal.Buffer or zehal.Layout");
    }

    // Drops the operands of fire-and-forget copies seen done, oldest first (copies of one
    // engine complete in order).
    void reap() {
        while (!detached_.empty() && detached_.front().first->done()) detached_.pop_front();
    }

    std::shared_ptr<aml::Dma> dma_;
    std::deque<std::pair<std::shared_ptr<aml::Request>, Operands>> detached_;
    std::shared_ptr<aml::Request> newest_;  // the last copy submitted (until the next one or close())
};

// The Python object of a Request, which also remembers its engine (for adopt()).
struct RequestHolder {
    RequestHolder(PyRequest r, pyb::object engine) : request(std::move(r)), dma(std::move(engine)) {}
    RequestHolder(RequestHolder&&) = default;
    RequestHolder(const RequestHolder&) = delete;
    RequestHolder& operator=(const RequestHolder&) = delete;

    PyRequest request;
    pyb::object dma;
    // A pending copy's operands must outlive it: hand them to the engine. (Runs with the
    // GIL held, as pybind11 destroys its instances; a moved-from holder has nothing.)
    ~RequestHolder() {
        if (request.request() && dma && !request.request()->done())
            dma.cast<PyDma&>().adopt(request.request(), request.take_keep());
    }
};

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

// Dma.copy through vectorcall (fast_call.hpp): a fire-and-forget copy is called with a
// keyword, which pybind11's dispatcher makes the costliest part of the call.
PyObject* dma_copy(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const FastParams params({"dst", "src", "nbytes", "op", "request", "signal", "dst_offset", "src_offset"}, 3,
                                   2);
    return fast_call<8>(params, "Dma.copy()", args, nargs, kwnames, [&](const auto& a) -> PyObject* {
        static const std::string kCopy1D = "copy_1D";
        std::string op;
        if (a[3]) {
            if (!PyUnicode_Check(a[3])) throw pyb::type_error("Dma.copy: op must be 'copy_1D' or 'memcpy'");
            Py_ssize_t n = 0;
            const char* c = PyUnicode_AsUTF8AndSize(a[3], &n);
            if (!c) throw pyb::error_already_set();
            op.assign(c, static_cast<size_t>(n));
        }
        PyObject* zero = PyLong_FromLong(0);  // a new reference to the interpreter's cached 0
        const pyb::object zero_ref = pyb::reinterpret_steal<pyb::object>(zero);
        const pyb::object me = pyb::reinterpret_borrow<pyb::object>(self);
        std::optional<PyRequest> r = self_of<PyDma>(self, "Dma.copy").copy(
            pyb::reinterpret_borrow<pyb::object>(a[0]), pyb::reinterpret_borrow<pyb::object>(a[1]),
            a[2] ? a[2] : Py_None, a[3] ? op : kCopy1D, bool_arg(a[4], true, "Dma.copy: request"),
            optional_event(a[5] ? a[5] : Py_None, "Dma.copy: signal"), a[6] ? a[6] : zero, a[7] ? a[7] : zero);
        if (!r) {
            Py_INCREF(Py_None);
            return Py_None;
        }
        return new_owned(std::make_unique<RequestHolder>(std::move(*r), me));
    });
}

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

// Request.wait through vectorcall: the other half of a round trip from Python.
PyObject* request_wait(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const FastParams params({"timeout"}, 1);
    return fast_call<1>(params, "Request.wait()", args, nargs, kwnames, [&](const auto& a) -> PyObject* {
        self_of<RequestHolder>(self, "Request.wait").request.wait(optional_seconds(a[0], "Request.wait: timeout"));
        Py_RETURN_NONE;
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

PyMethodDef kRequestWaitDef = {
    "wait", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&request_wait)), METH_FASTCALL | METH_KEYWORDS,
    "wait($self, timeout=None)\n--\n\n"
    "Waits until the copy completed (timeout in seconds; None: forever). NotReadyError on timeout; raises the "
    "copy's error (DeviceLostError, ...)."};

PyMethodDef kDmaCopyDef = {
    "copy", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&dma_copy)), METH_FASTCALL | METH_KEYWORDS,
    "copy($self, dst, src, nbytes=None, *, op='copy_1D', request=True, signal=None, dst_offset=0, src_offset=0)\n"
    "--\n\n"
    "Copies src into dst (Buffers, or one-dimensional Layouts for copy_1D) and returns at once: a Request, or None "
    "with request=False (fire-and-forget: barrier() waits for it). nbytes: bytes to copy (None: the rest of src; "
    "must fit both). op: 'copy_1D' or 'memcpy'. signal: an Event the copy itself signals. dst_offset, src_offset: "
    "bytes skipped at the start of each operand."};

}  // namespace

void bind_dma(pyb::module_& m) {
    pyb::class_<RequestHolder> request_class = pyb::class_<RequestHolder>(m, "Request",
                               "A submitted copy. A pending request keeps its operands alive. wait() is idempotent "
                               "and releases the GIL; after cancel(), done is True and wait() returns at once.")
        .def("cancel", [](RequestHolder& h) { h.request.cancel(); },
             "Removes the copy from its queue if it has not started, else waits for it. Does nothing once done.")
        .def_property_readonly("done", [](RequestHolder& h) { return h.request.done(); },
                               "True once the copy completed or was cancelled (queried live).")
        .def_property_readonly("flags", [](RequestHolder& h) { return h.request.flags(); },
                               "AML_DMA_ZE_REQUEST_FLAGS_PENDING (0) or _DONE (1), queried live.")
        .def_property_readonly("cancelled", [](RequestHolder& h) { return h.request.cancelled(); },
                               "True when cancel() removed the copy before it ran.")
        .def("__enter__", [](pyb::object self) { return self; })
        .def("__exit__",
             [](RequestHolder& h, pyb::object type, pyb::object, pyb::object) {
                 if (type.is_none())
                     h.request.wait(std::nullopt);
                 else
                     h.request.cancel();
             })
        .def("__repr__", [](RequestHolder& h) {
            return std::string("<zehal.Request ") + (h.request.done() ? "done" : "pending") + ">";
        })
        .def_property_readonly_static(
            "FLAGS_PENDING", [](pyb::object) { return AML_DMA_ZE_REQUEST_FLAGS_PENDING; },
            "Value of flags while the copy is pending (AML_DMA_ZE_REQUEST_FLAGS_PENDING).")
        .def_property_readonly_static(
            "FLAGS_DONE", [](pyb::object) { return AML_DMA_ZE_REQUEST_FLAGS_DONE; },
            "Value of flags once the copy is done (AML_DMA_ZE_REQUEST_FLAGS_DONE).");

    pyb::class_<PyDma> dma_class = pyb::class_<PyDma>(m, "Dma",
                       "An engine: asynchronous copies on engine `index` of engine group `ordinal` (1: copy "
                       "engines, 0: compute engines) of a device. Copies complete in submission order; many "
                       "threads may submit at once.")
        .def(pyb::init<const hal::DeviceRef&, pyb::handle, pyb::handle>(), pyb::arg("device") = pyb::none(),
             pyb::arg("ordinal") = 1, pyb::arg("index") = 0)
        .def_static("default", &PyDma::make_default,
                    "An engine as aml_dma_ze_default: copy engine 0 of the default device.")
        .def_property_readonly("pending", &PyDma::pending, "Copies with a request not yet seen done.")
        .def_property_readonly("device", [](PyDma& d) { return d.live("Dma.device").device(); }, "The device.")
        .def_property_readonly("ordinal", [](PyDma& d) { return d.live("Dma.ordinal").ordinal(); }, "Engine group.")
        .def_property_readonly("index", [](PyDma& d) { return d.live("Dma.index").index(); }, "Engine index.")
        .def_property_readonly("closed", &PyDma::closed, "True after close().")
        .def("close", &PyDma::close, "Waits for every copy, then releases the engine. Idempotent.")
        .def("__enter__", [](pyb::object self) { return self; })
        .def("__exit__", [](PyDma& d, pyb::args) { d.close(); })
        .def("__repr__", [](PyDma& d) {
            if (d.closed()) return std::string("<zehal.Dma closed>");
            aml::Dma& dma = d.live("Dma");
            return "<zehal.Dma ordinal=" + std::to_string(dma.ordinal()) + " index=" + std::to_string(dma.index()) +
                   " on " + std::string(dma.device()->backend_name()) + ">";
        });
    add_fast_method(request_class, &kRequestWaitDef);
    add_fast_method(dma_class, &kDmaCopyDef);
    add_fast_method(dma_class, &kDmaBarrierDef);
}

}  // namespace zehal::py
