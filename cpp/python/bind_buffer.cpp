// Buffer from Python: the buffer protocol, DLPack (versioned and legacy) and
// __cuda_array_interface__ over the memory of an Area.
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
#include "python/dlpack.hpp"
#include "python/fast_call.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/layout_object.hpp"

namespace zehal::py {
namespace {

std::string device_memory_message(const Buffer& b) {
    return "zehal.Buffer: " + std::string(b.device()->backend_name()) +
           " device memory is not host-accessible, so it has no buffer protocol; copy it into a host or shared "
           "buffer with Dma.copy (or hand it to a device library with __dlpack__)";
}

// bf_getbuffer of Buffer: host and shared memory as writable 1-D unsigned bytes.
int buffer_getbuffer(PyObject* self, Py_buffer* view, int flags) {
    Buffer* made = instance_of<Buffer>(self);
    if (!made) {
        PyErr_SetString(PyExc_TypeError, "zehal.Buffer (buffer protocol): the object was not initialized");
        view->obj = nullptr;
        return -1;
    }
    try {
        Buffer& b = *made;
        void* ptr = b.live("Buffer (buffer protocol)");
        if (!b.host_accessible()) {
            PyErr_SetString(PyExc_BufferError, device_memory_message(b).c_str());
            return -1;
        }
        // An empty mapping has no pointer; any valid address does for zero bytes.
        static char empty;
        if (PyBuffer_FillInfo(view, self, ptr ? ptr : &empty, static_cast<Py_ssize_t>(b.nbytes()), 0, flags) != 0)
            return -1;
        b.add_export();
        return 0;
    } catch (pyb::error_already_set& e) {
        e.restore();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_BufferError, e.what());
    }
    view->obj = nullptr;
    return -1;
}

void buffer_releasebuffer(PyObject* self, Py_buffer*) { pyb::cast<Buffer&>(pyb::handle(self)).drop_export(); }

// (DLPack device type, device id) of a buffer: sim host and shared memory are CPU memory,
// sim device memory an external device; CUDA memory is CUDA, pinned host or managed;
// Level Zero memory is oneAPI USM (host memory is also plain CPU memory).
std::pair<int32_t, int32_t> dlpack_device(const Buffer& b) {
    const std::string_view backend = b.device()->backend_name();
    int32_t id = 0;
    std::shared_ptr<hal::Backend> be;
    if (hal::find_backend(backend, &be) == ZE_RESULT_SUCCESS) {
        const auto& list = be->devices();
        for (size_t i = 0; i < list.size(); ++i)
            if (list[i] == b.device()) id = static_cast<int32_t>(i);
    }
    const hal::MemoryKind kind = b.kind();
    if (backend == "cuda") {
        if (kind == hal::MemoryKind::device) return {kDLCUDA, id};
        if (kind == hal::MemoryKind::host) return {kDLCUDAHost, 0};
        return {kDLCUDAManaged, id};
    }
    if (backend == "level_zero") {
        if (kind == hal::MemoryKind::host) return {kDLCPU, 0};
        return {kDLOneAPI, id};
    }
    if (kind == hal::MemoryKind::device) return {kDLExtDev, id};
    return {kDLCPU, 0};
}

// What a capsule's tensor owns: the shape, and a reference to the Buffer object (which
// counts the export, so close() refuses to unmap under a consumer).
struct DLPackContext {
    PyObject* buffer;
    int64_t shape[1];
};

void release_context(DLPackContext* ctx) {
    PyGILState_STATE gil = PyGILState_Ensure();  // deleters may run on any thread
    pyb::cast<Buffer&>(pyb::handle(ctx->buffer)).drop_export();
    Py_DECREF(ctx->buffer);
    delete ctx;
    PyGILState_Release(gil);
}

void fill_tensor(DLTensor* t, Buffer& b, void* ptr, DLPackContext* ctx) {
    const auto [type, id] = dlpack_device(b);
    t->data = ptr;
    t->device = {type, id};
    t->ndim = 1;
    t->dtype = {kDLUInt, 8, 1};
    t->shape = ctx->shape;
    t->strides = nullptr;  // compact
    t->byte_offset = 0;
}

// A pair of integers (a DLPack version or device) from `obj`: TypeError naming `what` and
// the value for anything but a sequence of two integers that fit in int32 (device) or int64.
template <typename T>
std::pair<T, T> int_pair(pyb::handle obj, const char* what) {
    auto fail = [&] {
        throw pyb::type_error(std::string("Buffer.__dlpack__: ") + what + " must be a tuple of two integers, not " +
                              pyb::repr(obj).cast<std::string>());
    };
    if (!PySequence_Check(obj.ptr()) || PyUnicode_Check(obj.ptr()) || PyBytes_Check(obj.ptr())) fail();
    pyb::sequence seq = pyb::reinterpret_borrow<pyb::sequence>(obj);
    if (seq.size() != 2) fail();
    T v[2];
    for (size_t i = 0; i < 2; ++i) {
        pyb::object item = seq[i];
        if (!PyLong_Check(item.ptr()) || PyBool_Check(item.ptr())) fail();
        int overflow = 0;
        const long long x = PyLong_AsLongLongAndOverflow(item.ptr(), &overflow);
        if (overflow || x < static_cast<long long>(std::numeric_limits<T>::min()) ||
            x > static_cast<long long>(std::numeric_limits<T>::max()))
            fail();
        v[i] = static_cast<T>(x);
    }
    return {v[0], v[1]};
}

// Buffer.__dlpack__: a versioned capsule ("dltensor_versioned") when max_version >= (1, 0),
// else a legacy one ("dltensor"), over the buffer's memory. copy=True (the array API: the
// producer copies) copies memory of DLPack device kDLCPU into a NumPy array and exports
// that; any other copy, or another dl_device, raises BufferError.
pyb::capsule buffer_dlpack(pyb::object self, pyb::object stream, pyb::object max_version, pyb::object dl_device,
                           pyb::object copy) {
    Buffer& b = self_of<Buffer>(self.ptr(), "Buffer.__dlpack__");
    // Every argument is converted before the buffer is read: a sequence's __len__ or
    // __getitem__ may close it.
    if (!stream.is_none() && !PyLong_Check(stream.ptr()))
        throw pyb::type_error("Buffer.__dlpack__: stream must be None or an integer");
    if (!copy.is_none() && !PyBool_Check(copy.ptr()))
        throw pyb::type_error("Buffer.__dlpack__: copy must be None or a bool, not " +
                              pyb::repr(copy).cast<std::string>());
    using Device = std::pair<int32_t, int32_t>;
    const bool versioned = !max_version.is_none() && int_pair<int64_t>(max_version, "max_version").first >= 1;
    const std::optional<Device> device_asked = dl_device.is_none()
                                                   ? std::nullopt
                                                   : std::optional<Device>(int_pair<int32_t>(dl_device, "dl_device"));
    void* ptr = b.live("Buffer.__dlpack__");
    const auto [type, id] = dlpack_device(b);
    if (copy.ptr() == Py_True) {
        const bool to_cpu = !device_asked || *device_asked == Device{kDLCPU, 0};
        if (type != kDLCPU || !to_cpu)
            throw pyb::buffer_error("Buffer.__dlpack__: copy=True is only possible for host-visible memory (DLPack "
                                    "device (1, 0)); copy device memory with Dma.copy");
        // NumPy takes an export of its own (checked again) and copies under it.
        pyb::object numpy = pyb::module_::import("numpy");
        pyb::object copied = numpy.attr("frombuffer")(self, numpy.attr("uint8")).attr("copy")();
        return pyb::reinterpret_steal<pyb::capsule>(
            copied.attr("__dlpack__")(pyb::arg("max_version") = max_version).release());
    }
    if (device_asked) {
        const Device want = *device_asked;
        if (want.first != type || want.second != id)
            throw pyb::buffer_error("Buffer.__dlpack__: the memory is on DLPack device (" + std::to_string(type) +
                                    ", " + std::to_string(id) + "); exporting to another device needs a copy");
    }

    // From here to the export's registration no Python code runs.
    auto* ctx = new DLPackContext{self.ptr(), {static_cast<int64_t>(b.nbytes())}};
    Py_INCREF(self.ptr());
    b.add_export();
    if (versioned) {
        auto* t = new DLManagedTensorVersioned{};
        t->version = {kDLPackMajor, kDLPackMinor};
        t->manager_ctx = ctx;
        t->deleter = [](DLManagedTensorVersioned* self_) {
            release_context(static_cast<DLPackContext*>(self_->manager_ctx));
            delete self_;
        };
        t->flags = 0;  // writable, not a copy
        fill_tensor(&t->dl_tensor, b, ptr, ctx);
        // A capsule never consumed (still named "dltensor_versioned") frees its tensor.
        return pyb::capsule(t, "dltensor_versioned", [](PyObject* cap) {
            if (!PyCapsule_IsValid(cap, "dltensor_versioned")) return;
            auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, "dltensor_versioned"));
            m->deleter(m);
        });
    }
    auto* t = new DLManagedTensor{};
    t->manager_ctx = ctx;
    t->deleter = [](DLManagedTensor* self_) {
        release_context(static_cast<DLPackContext*>(self_->manager_ctx));
        delete self_;
    };
    fill_tensor(&t->dl_tensor, b, ptr, ctx);
    return pyb::capsule(t, "dltensor", [](PyObject* cap) {
        if (!PyCapsule_IsValid(cap, "dltensor")) return;
        auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, "dltensor"));
        m->deleter(m);
    });
}

// Buffer.__cuda_array_interface__ (version 3) of CUDA memory; AttributeError elsewhere,
// so that hasattr() answers False.
pyb::dict cuda_array_interface(Buffer& b) {
    if (b.device()->backend_name() != "cuda")
        throw pyb::attribute_error("__cuda_array_interface__: only CUDA memory has one (this is " +
                                   std::string(b.device()->backend_name()) + " memory)");
    void* ptr = b.live("Buffer.__cuda_array_interface__");
    pyb::dict d;
    d["shape"] = pyb::make_tuple(b.nbytes());
    d["typestr"] = "|u1";
    d["data"] = pyb::make_tuple(reinterpret_cast<uintptr_t>(ptr), false);
    d["strides"] = pyb::none();
    d["version"] = 3;
    return d;
}

// Buffer.close(), called directly (METH_NOARGS) rather than through pybind11's dispatch:
// closing a pooled buffer costs less than the dispatch.
PyObject* buffer_close(PyObject* self, PyObject*) {
    return fast_call_guarded([&]() -> PyObject* {
        holder_of<Buffer>(self, "Buffer.close")->close();
        Py_RETURN_NONE;
    });
}

PyMethodDef kBufferCloseDef = {
    "close", &buffer_close, METH_NOARGS,
    "close($self)\n--\n\n"
    "Unmaps the memory after waiting for the copies that use it. BufferError while an export is alive; idempotent."};

}  // namespace

void bind_buffer(pyb::module_& m) {
    auto cls = pyb::class_<Buffer, BufferRef>(
        m, "Buffer", pyb::buffer_protocol(),
        "Memory mapped by an Area (it keeps the area alive). Host and shared memory speak the buffer protocol "
        "(writable 1-D bytes: memoryview, numpy.frombuffer without a copy); device memory raises BufferError. "
        "Every kind exports DLPack (__dlpack__, __dlpack_device__), CUDA memory also __cuda_array_interface__. "
        "close() (or leaving a with block) unmaps it once its copies completed and no export is left.");
    // The buffer protocol, with the exports counted (pybind11's def_buffer cannot count).
    auto* heap = reinterpret_cast<PyHeapTypeObject*>(cls.ptr());
    heap->as_buffer.bf_getbuffer = buffer_getbuffer;
    heap->as_buffer.bf_releasebuffer = buffer_releasebuffer;
    PyType_Modified(reinterpret_cast<PyTypeObject*>(cls.ptr()));

    cls.def_property_readonly(
           "ptr", [](const Buffer& b) { return reinterpret_cast<uintptr_t>(b.live("Buffer.ptr")); },
           "Address of the first byte (0 for an empty buffer).")
        .def_property_readonly("nbytes", &Buffer::nbytes, "Size in bytes.")
        .def_property_readonly(
            "kind", [](const Buffer& b) { return std::string(aml::kind_name(b.kind())); },
            "'host', 'device' or 'shared'.")
        .def_property_readonly("device", &Buffer::device, "The device of its area.")
        .def_property_readonly("area", &Buffer::area, "The Area that mapped it.")
        .def_property_readonly("closed", &Buffer::closed, "True after close().")
        .def_property_readonly("exports", &Buffer::exports,
                               "Number of live exports (memoryviews, NumPy arrays, DLPack capsules).")
        .def("__enter__", &enter<Buffer>)
        .def("__exit__", [](Buffer& b, pyb::args) { b.close(); })
        // Positional or keyword: consumers pass them by keyword (the array API), older callers by position.
        .def("__dlpack__", &buffer_dlpack, pyb::arg("stream") = pyb::none(), pyb::arg("max_version") = pyb::none(),
             pyb::arg("dl_device") = pyb::none(), pyb::arg("copy") = pyb::none(),
             "__dlpack__(stream=None, max_version=None, dl_device=None, copy=None): a DLPack capsule over the "
             "memory (no copy): versioned when max_version >= (1, 0), else legacy. copy=True copies host-visible "
             "memory (DLPack device (1, 0)) into a new array; else it, or another dl_device, raises BufferError.")
        .def(
            "__dlpack_device__",
            [](const Buffer& b) {
                b.live("Buffer.__dlpack_device__");
                const auto [type, id] = dlpack_device(b);
                return pyb::make_tuple(type, id);
            },
            "(device type, device id): kDLCPU (1) for sim host and shared memory, kDLExtDev (12) for sim device "
            "memory; kDLCUDA (2), kDLCUDAHost (3), kDLCUDAManaged (13) on CUDA; kDLOneAPI (14) on Level Zero.")
        .def_property_readonly("__cuda_array_interface__", &cuda_array_interface,
                               "Version 3 of the CUDA array interface (CUDA memory only).")
        .def("__repr__", [](const Buffer& b) {
            if (b.closed()) return std::string("<zehal.Buffer closed>");
            char text[160];
            std::snprintf(text, sizeof text, "<zehal.Buffer %s %zu bytes at 0x%zx on %s>", aml::kind_name(b.kind()),
                          b.nbytes(), reinterpret_cast<size_t>(b.live("Buffer")),
                          std::string(b.device()->backend_name()).c_str());
            return std::string(text);
        });
    add_fast_method(cls, &kBufferCloseDef);
}

}  // namespace zehal::py
