// AML from Python: Area, Buffer (buffer protocol, DLPack, __cuda_array_interface__),
// Layout, Dma and Request over the C++ classes of cpp/aml.
#include <pybind11/eval.h>
#include <pybind11/stl.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <limits>
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
#include "python/gil.hpp"
#include "python/int_arg.hpp"

namespace zehal::py {
namespace {

// --- DLPack ABI (dlpack.h v1.0): the structs a capsule carries ------------------------

enum DLDeviceType : int32_t {
    kDLCPU = 1,
    kDLCUDA = 2,
    kDLCUDAHost = 3,
    kDLExtDev = 12,
    kDLCUDAManaged = 13,
    kDLOneAPI = 14,
};
constexpr uint8_t kDLUInt = 1;
constexpr uint32_t kDLPackMajor = 1;
constexpr uint32_t kDLPackMinor = 0;

struct DLDevice {
    int32_t device_type;
    int32_t device_id;
};
struct DLDataType {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
};
struct DLTensor {
    void* data;
    DLDevice device;
    int32_t ndim;
    DLDataType dtype;
    int64_t* shape;
    int64_t* strides;
    uint64_t byte_offset;
};
struct DLManagedTensor {
    DLTensor dl_tensor;
    void* manager_ctx;
    void (*deleter)(DLManagedTensor* self);
};
struct DLPackVersion {
    uint32_t major;
    uint32_t minor;
};
struct DLManagedTensorVersioned {
    DLPackVersion version;
    void* manager_ctx;
    void (*deleter)(DLManagedTensorVersioned* self);
    uint64_t flags;
    DLTensor dl_tensor;
};

// --- Buffer ---------------------------------------------------------------------------

// One mapping of an Area. Keeps its area alive. Host and shared memory speak the buffer
// protocol (writable 1-D bytes); every kind exports DLPack. close() unmaps once no export
// (memoryview, NumPy array, DLPack capsule) is left, after the copies using it completed.
class Buffer {
public:
    Buffer(std::shared_ptr<aml::Area> area, void* ptr, size_t nbytes)
        : area_(std::move(area)), ptr_(ptr), nbytes_(nbytes) {}
    ~Buffer() {
        if (closed_ || !ptr_) return;
        // Never unmapped under a copy (contract §11). Waited for without touching the GIL
        // (a DLPack deleter may drop the last reference from any thread); the copies finish
        // on the engines whatever the GIL does.
        for (const auto& w : users_)
            if (auto r = w.lock()) r->wait();
        unmap();
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    // The pointer, or InvalidArgumentError (INVALID_NULL_HANDLE) once closed.
    void* live(std::string_view what) const {
        if (closed_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the buffer is closed");
        return ptr_;
    }

    void close() {
        if (closed_) return;
        if (exports_ > 0)
            throw pyb::buffer_error("zehal.Buffer.close: " + std::to_string(exports_) +
                                    " export(s) (memoryview, NumPy array, DLPack capsule) still use the memory");
        wait_for_users();
        if (closed_) return;  // closed by another thread while this one waited
        // Another thread may have taken an export while this one waited without the GIL.
        if (exports_ > 0)
            throw pyb::buffer_error("zehal.Buffer.close: " + std::to_string(exports_) +
                                    " export(s) taken while close() waited for copies still use the memory");
        closed_ = true;
        check(unmap(), "Buffer.close");
    }

    // Records a copy that reads or writes this buffer: close() waits for it.
    void add_user(const std::shared_ptr<aml::Request>& request) {
        std::erase_if(users_, [](const std::weak_ptr<aml::Request>& w) {
            auto r = w.lock();
            return !r || r->done();
        });
        users_.push_back(request);
    }

    bool closed() const { return closed_; }
    size_t nbytes() const { return nbytes_; }
    hal::MemoryKind kind() const { return area_->kind(); }
    const std::shared_ptr<aml::Area>& area() const { return area_; }
    const hal::DeviceRef& device() const { return area_->device(); }
    bool host_accessible() const { return kind() != hal::MemoryKind::device; }
    int exports() const { return exports_; }
    void add_export() { ++exports_; }
    void drop_export() { --exports_; }

private:
    // Gives the memory back to the area (a pool finds the block by its size).
    ze_result_t unmap() noexcept { return area_->pool() ? area_->unmap(ptr_, nbytes_) : area_->unmap(ptr_); }

    // Waits, without the GIL, for the copies still using this buffer.
    void wait_for_users() {
        std::vector<std::shared_ptr<aml::Request>> pending;
        for (const auto& w : users_)
            if (auto r = w.lock(); r && !r->done()) pending.push_back(std::move(r));
        users_.clear();
        if (pending.empty()) return;
        without_gil([&] {
            for (const auto& r : pending) r->wait();
        });
    }

    const std::shared_ptr<aml::Area> area_;
    void* const ptr_;
    const size_t nbytes_;
    bool closed_ = false;  // guarded by the GIL, as every field below
    int exports_ = 0;
    std::vector<std::weak_ptr<aml::Request>> users_;
};

using BufferRef = std::shared_ptr<Buffer>;

// The message of BufferError for device memory.
std::string device_memory_message(const Buffer& b) {
    return "zehal.Buffer: " + std::string(b.device()->backend_name()) +
           " device memory is not host-accessible, so it has no buffer protocol; copy it into a host or shared "
           "buffer with Dma.copy (or hand it to a device library with __dlpack__)";
}

// bf_getbuffer of Buffer: host and shared memory as writable 1-D unsigned bytes.
int buffer_getbuffer(PyObject* self, Py_buffer* view, int flags) {
    try {
        Buffer& b = pyb::cast<Buffer&>(pyb::handle(self));
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

void buffer_releasebuffer(PyObject* self, Py_buffer*) {
    pyb::cast<Buffer&>(pyb::handle(self)).drop_export();
}

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
    Buffer& b = self.cast<Buffer&>();
    void* ptr = b.live("Buffer.__dlpack__");
    if (!stream.is_none() && !PyLong_Check(stream.ptr()))
        throw pyb::type_error("Buffer.__dlpack__: stream must be None or an integer");
    const auto [type, id] = dlpack_device(b);
    if (!copy.is_none() && !PyBool_Check(copy.ptr()))
        throw pyb::type_error("Buffer.__dlpack__: copy must be None or a bool, not " + pyb::repr(copy).cast<std::string>());
    using Device = std::pair<int32_t, int32_t>;
    if (!max_version.is_none()) int_pair<int64_t>(max_version, "max_version");
    const std::optional<Device> device_asked =
        dl_device.is_none() ? std::nullopt : std::optional<Device>(int_pair<int32_t>(dl_device, "dl_device"));
    if (!copy.is_none() && copy.ptr() == Py_True) {
        const bool to_cpu = !device_asked || *device_asked == Device{kDLCPU, 0};
        if (type != kDLCPU || !to_cpu)
            throw pyb::buffer_error("Buffer.__dlpack__: copy=True is only possible for host-visible memory (DLPack "
                                    "device (1, 0)); copy device memory with Dma.copy");
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
    bool versioned = false;
    if (!max_version.is_none()) {
        versioned = int_pair<int64_t>(max_version, "max_version").first >= 1;
    }

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

// --- Area -------------------------------------------------------------------------------

constexpr size_t kDefaultAlignment = 64;

std::shared_ptr<aml::Area> make_area(const hal::DeviceRef& device, hal::MemoryKind kind, pyb::handle ordinal,
                                     pyb::handle flags, pyb::handle alignment, std::string_view what) {
    const auto o = int_arg<uint32_t>(ordinal, std::string(what) + ": ordinal");
    const auto f = int_arg<uint32_t>(flags, std::string(what) + ": flags");
    const auto a = int_arg<size_t>(alignment, std::string(what) + ": alignment");
    if (a == 0 || (a & (a - 1)))
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              std::string(what) + ": alignment = " + std::to_string(a) + " (must be a non-zero power of two)");
    const hal::DeviceRef d = device_or_default(device);
    if (kind != hal::MemoryKind::host && o >= d->properties().memory_ordinals)
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT, std::string(what) + ": ordinal = " + std::to_string(o) + " (the device has " +
                                                    std::to_string(d->properties().memory_ordinals) + " memory ordinals)");
    std::shared_ptr<aml::Area> area;
    check(aml::Area::create(d, kind, o, f, a, &area), what);
    return area;
}

BufferRef area_mmap(const std::shared_ptr<aml::Area>& area, pyb::handle nbytes) {
    const auto n = int_arg<size_t>(nbytes, "Area.mmap: nbytes", ZE_RESULT_ERROR_INVALID_SIZE);
    void* p = nullptr;
    check(area->map(n, &p), area->closed() ? "Area.mmap: the area is closed" : "Area.mmap");
    return std::make_shared<Buffer>(area, p, n);
}

void area_munmap(const std::shared_ptr<aml::Area>& area, Buffer& buffer) {
    if (buffer.area() != area) check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "Area.munmap: the buffer is of another area");
    if (buffer.closed()) check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "Area.munmap: the buffer is already unmapped");
    buffer.close();
}

BufferRef import_dma_buf(pyb::handle fd, pyb::handle size, const hal::DeviceRef& device) {
    const auto f = int_arg<int>(fd, "Area.import_dma_buf: fd");
    const auto n = int_arg<size_t>(size, "Area.import_dma_buf: size", ZE_RESULT_ERROR_INVALID_SIZE);
    std::shared_ptr<aml::Area> area;
    // Imported pages are page aligned (Level Zero asks for 4096).
    check(aml::Area::create(device_or_default(device), hal::MemoryKind::device, 0, 0, 4096, &area),
          "Area.import_dma_buf");
    void* p = nullptr;
    check(area->import_dma_buf(f, n, &p), "Area.import_dma_buf");
    return std::make_shared<Buffer>(area, p, n);
}

// --- Layout ---------------------------------------------------------------------------

// A dense layout over a Buffer, which it keeps alive.
struct PyLayout {
    std::unique_ptr<aml::Layout> layout;
    BufferRef buffer;
};

std::vector<size_t> size_list(pyb::handle seq, std::string_view what) {
    std::vector<size_t> out;
    // One integer (a Python int or any integer-like scalar, as NumPy's) is one dimension.
    if (PyLong_Check(seq.ptr()) || (PyIndex_Check(seq.ptr()) && !PySequence_Check(seq.ptr()))) {
        out.push_back(int_arg<size_t>(seq, what));
        return out;
    }
    if (!PySequence_Check(seq.ptr()) && !PyIter_Check(seq.ptr()))
        throw pyb::type_error(std::string(what) + " must be an integer or a sequence of integers, not " +
                              pyb::repr(seq).cast<std::string>());
    for (pyb::handle item : pyb::iter(seq)) out.push_back(int_arg<size_t>(item, what));
    return out;
}

PyLayout layout_dense(const BufferRef& buffer, pyb::handle element_size, pyb::handle dims, const std::string& order,
                      pyb::handle stride, pyb::handle pitch) {
    if (!buffer) check(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "Layout.dense: buffer is None");
    void* ptr = buffer->live("Layout.dense");
    int o = 0;
    if (order == "C")
        o = aml::Layout::kRowMajor;
    else if (order == "F")
        o = aml::Layout::kColumnMajor;
    else
        check(ZE_RESULT_ERROR_INVALID_ENUMERATION, "Layout.dense: order must be 'C' or 'F', not '" + order + "'");
    const auto es = int_arg<size_t>(element_size, "Layout.dense: element_size", ZE_RESULT_ERROR_INVALID_SIZE);
    const std::vector<size_t> d = size_list(dims, "Layout.dense: dims");
    const std::vector<size_t> s = stride.is_none() ? std::vector<size_t>{} : size_list(stride, "Layout.dense: stride");
    const std::vector<size_t> p = pitch.is_none() ? std::vector<size_t>{} : size_list(pitch, "Layout.dense: pitch");
    PyLayout out;
    check_aml(aml::Layout::dense(ptr, o, es, d, s, p, &out.layout), "Layout.dense");
    if (out.layout->extent_bytes() > buffer->nbytes())
        check(ZE_RESULT_ERROR_INVALID_SIZE, "Layout.dense: the layout spans " +
                                                std::to_string(out.layout->extent_bytes()) + " bytes, the buffer has " +
                                                std::to_string(buffer->nbytes()));
    out.buffer = buffer;
    return out;
}

uintptr_t layout_deref(const PyLayout& l, pyb::args args) {
    l.buffer->live("Layout.deref");
    std::vector<size_t> coords;
    if (args.size() == 1 && !PyLong_Check(args[0].ptr()))
        coords = size_list(args[0], "Layout.deref: coordinate");
    else
        for (pyb::handle a : args) coords.push_back(int_arg<size_t>(a, "Layout.deref: coordinate"));
    void* p = nullptr;
    const int r = l.layout->deref(coords, &p);
    if (r == -AML_EDOM) check_aml(r, "Layout.deref: a coordinate is out of its dimension (AML_EDOM)");
    if (r == -AML_EINVAL) check_aml(r, "Layout.deref: one coordinate per dimension is needed");
    check_aml(r, "Layout.deref");
    return reinterpret_cast<uintptr_t>(p);
}

// --- Dma and Request ------------------------------------------------------------------

// A request as Python holds it: the copy's operands stay alive until it is done.
class PyRequest {
public:
    PyRequest(std::shared_ptr<aml::Request> request, pyb::object keep)
        : request_(std::move(request)), keep_(std::move(keep)) {}

    void wait(const std::optional<double>& timeout) {
        wait_slices(timeout, "Request.wait");
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
        if (d) keep_ = pyb::none();
        return d;
    }
    int flags() {
        const int f = request_->flags();
        if (f == AML_DMA_ZE_REQUEST_FLAGS_DONE) keep_ = pyb::none();
        return f;
    }
    bool cancelled() const { return request_->cancelled(); }
    const std::shared_ptr<aml::Request>& request() const { return request_; }
    // What must outlive the copy, for the engine to hold when this object goes first.
    pyb::object take_keep() { return std::exchange(keep_, pyb::none()); }

private:
    void release_if_done() {
        if (request_->done()) keep_ = pyb::none();
    }
    // Waits in slices without the GIL, taking it back between slices to let Python handle
    // signals (Ctrl-C interrupts a long wait).
    void wait_slices(const std::optional<double>& seconds, std::string_view what) {
        constexpr uint64_t kSliceNs = 100'000'000;
        uint64_t total = kWaitForever;
        if (seconds && !(std::isinf(*seconds) && *seconds > 0)) {
            if (std::isnan(*seconds) || *seconds < 0)
                check(ZE_RESULT_ERROR_INVALID_ARGUMENT, std::string(what) + ": timeout must be None or >= 0 seconds");
            const double ns = *seconds * 1e9;
            total = ns >= static_cast<double>(kWaitForever - 1) ? kWaitForever - 1 : static_cast<uint64_t>(ns);
        }
        const uint64_t deadline = total == kWaitForever ? kWaitForever : host_now_ns() + total;
        for (;;) {
            const uint64_t now = host_now_ns();
            const uint64_t left = deadline == kWaitForever ? kWaitForever : (deadline > now ? deadline - now : 0);
            const uint64_t slice = left < kSliceNs ? left : kSliceNs;
            ze_result_t r;
            r = without_gil([&] { return request_->wait(slice); });
            if (r != ZE_RESULT_NOT_READY) return;
            if (slice == left) check(r, std::string(what) + ": timed out");
            if (PyErr_CheckSignals() != 0) throw pyb::error_already_set();
        }
    }

    std::shared_ptr<aml::Request> request_;
    pyb::object keep_;  // (dst, src) while the copy may be pending
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
        pyb::object keep = pyb::make_tuple(dst, src);
        reap();
        if (want_request) return PyRequest(std::move(request), std::move(keep));
        detached_.push_back({std::move(request), std::move(keep)});
        return std::nullopt;
    }

    void barrier() {
        // Our own reference: a close() from another thread may drop dma_ while we wait.
        const std::shared_ptr<aml::Dma> dma = dma_;
        if (!dma) live("Dma.barrier");
        ze_result_t r;
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
        dma_.reset();
    }

    // Holds `keep` until `request` completes (a Request object that goes before its copy).
    void adopt(std::shared_ptr<aml::Request> request, pyb::object keep) {
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
    // to the engine's device, named with where it lives.
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
            if (o->buffer->device().get() != engine)
                return ": " + std::string(name) + " is " + where(*o) + ";" + on;
        if (signal) return ": signal may be an event of another device;" + on;
        return {};
    }

    static Operand operand(pyb::handle obj, std::string_view what) {
        if (pyb::isinstance<Buffer>(obj)) {
            Buffer& b = obj.cast<Buffer&>();
            return {b.live(what), b.nbytes(), true, &b};
        }
        if (pyb::isinstance<PyLayout>(obj)) {
            const PyLayout& l = obj.cast<const PyLayout&>();
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
    std::deque<std::pair<std::shared_ptr<aml::Request>, pyb::object>> detached_;
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
        .def("close", &Buffer::close,
             "Unmaps the memory after waiting for the copies that use it. BufferError while an export is alive; "
             "idempotent.")
        .def("__enter__", [](pyb::object self) { return self; })
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
}

void bind_area(pyb::module_& m) {
    using aml::Area;
    using AreaRef = std::shared_ptr<Area>;
    auto cls = pyb::class_<Area, AreaRef>(m, "Area",
                               "Maps host, device or shared memory of one device with a fixed alignment (a power of "
                               "two). Buffers keep their area alive; close() refuses later mmap calls.")
        .def_static(
            "shared",
            [](const hal::DeviceRef& device, pyb::handle alignment) {
                return make_area(device, hal::MemoryKind::shared, pyb::int_(0), pyb::int_(0), alignment,
                                 "Area.shared");
            },
            pyb::arg("device") = pyb::none(), pyb::arg("alignment") = kDefaultAlignment,
            "Shared memory of `device`: one pointer on the host and the device.")
        .def_static(
            "host",
            [](pyb::handle flags, pyb::handle alignment) {
                return make_area(nullptr, hal::MemoryKind::host, pyb::int_(0), flags, alignment, "Area.host");
            },
            pyb::arg("flags") = 0, pyb::arg("alignment") = kDefaultAlignment,
            "Host memory of the default backend, usable by each of its devices.")
        .def_static(
            "default_device",
            [] {
                return make_area(nullptr, hal::MemoryKind::device, pyb::int_(0),
                                 pyb::int_(AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED), pyb::int_(kDefaultAlignment),
                                 "Area.default_device");
            },
            "A device area as aml_area_ze_device: the default device, alignment 64, cached bias.")
        .def_static(
            "default_host",
            [] {
                return make_area(nullptr, hal::MemoryKind::host, pyb::int_(0),
                                 pyb::int_(AML_AREA_ZE_ALLOC_FLAG_BIAS_CACHED), pyb::int_(kDefaultAlignment),
                                 "Area.default_host");
            },
            "A host area as aml_area_ze_host: the default backend, alignment 64, cached bias.")
        .def_static("_import_dma_buf", &import_dma_buf, pyb::arg("fd"), pyb::arg("size"),
                    pyb::arg("device") = pyb::none(),
                    "Device memory over the pages of dma-buf `fd` (not taken over: the caller keeps and closes it), "
                    "as a Buffer of kind 'device'.")
        .def("mmap", &area_mmap, pyb::arg("nbytes"),
             "A Buffer of `nbytes` bytes (0: an empty buffer, nothing mapped). OutOfMemoryError when the device is "
             "full.")
        .def("munmap", &area_munmap, pyb::arg("buffer"),
             "Unmaps `buffer` (as buffer.close()); InvalidArgumentError for a buffer of another area or one already "
             "unmapped.")
        .def_property_readonly(
            "kind", [](const Area& a) { return std::string(aml::kind_name(a.kind())); },
            "'host', 'device' or 'shared'.")
        .def_property_readonly("alignment", &Area::alignment, "Alignment of every mapped pointer.")
        .def_property_readonly("flags", &Area::flags, "The backend's allocation flags.")
        .def_property_readonly("ordinal", &Area::ordinal, "Memory ordinal.")
        .def_property_readonly("closed", &Area::closed, "True after close().")
        .def("close", &Area::close, "Refuses later mmap calls; buffers already mapped stay valid. Idempotent.")
        .def("__enter__", [](pyb::object self) { return self; })
        .def("__exit__", [](Area& a, pyb::args) { a.close(); })
        .def("fprintf", [](const Area& a) {
            // The text aml_area_fprintf writes, as a string.
            char* text = nullptr;
            size_t size = 0;
            FILE* f = open_memstream(&text, &size);
            if (!f) throw std::bad_alloc();
            a.describe(f, "");
            std::fclose(f);
            std::string out(text, size);
            std::free(text);
            return out;
        }, "The description aml_area_fprintf prints (kind, backend, device, alignment, flags).")
        .def("__repr__", [](const Area& a) {
            return "<zehal.Area " + std::string(aml::kind_name(a.kind())) + " alignment=" +
                   std::to_string(a.alignment()) + " on " + std::string(a.device()->backend_name()) +
                   (a.closed() ? " closed>" : ">");
        });

    // Area.device (factory and attribute), Area.import_dma_buf and Area.pool are put on the
    // class by python/zehal/_descriptors.py over these, so that on an instance they act on it.
    cls.def_static(
        "_make_device",
        [](const hal::DeviceRef& device, pyb::handle ordinal, pyb::handle flags, pyb::handle alignment) {
            return make_area(device, hal::MemoryKind::device, ordinal, flags, alignment, "Area.device");
        },
        pyb::arg("device") = pyb::none(), pyb::arg("ordinal") = 0, pyb::arg("flags") = 0,
        pyb::arg("alignment") = kDefaultAlignment,
        "Area.device(device=None, ordinal=0, flags=0, alignment=64): an area of device memory of `device` (None: "
        "the default device), memory ordinal `ordinal`, the backend's allocation flags.");
    cls.def_property_readonly("_device", [](const Area& a) { return a.device(); });
}

void bind_layout(pyb::module_& m) {
    pyb::class_<PyLayout>(m, "Layout",
                          "A dense layout over a Buffer (kept alive): dims, element size, order, stride, pitch.")
        .def_static("dense", &layout_dense, pyb::arg("buffer"), pyb::arg("element_size"), pyb::arg("dims"),
                    pyb::arg("order") = "C", pyb::arg("stride") = pyb::none(), pyb::arg("pitch") = pyb::none(),
                    "order 'C' (row-major: the last dimension contiguous) or 'F' (column-major). stride: elements "
                    "between used elements of each dimension (None: 1s); pitch: elements allocated per dimension "
                    "(None: dims; each >= its dim). The layout must fit in the buffer.")
        .def("deref", &layout_deref,
             "Address (int) of the element at the coordinates, given as arguments or one sequence; "
             "InvalidArgumentError out of bounds.")
        .def_property_readonly("dims", [](const PyLayout& l) { return pyb::tuple(pyb::cast(l.layout->dims())); },
                               "Dimensions in user order.")
        .def_property_readonly("ndims", [](const PyLayout& l) { return l.layout->ndims(); }, "Number of dimensions.")
        .def_property_readonly("element_size", [](const PyLayout& l) { return l.layout->element_size(); },
                               "Bytes of one element.")
        .def_property_readonly(
            "order", [](const PyLayout& l) { return l.layout->order() == aml::Layout::kRowMajor ? "C" : "F"; },
            "'C' or 'F'.")
        .def_property_readonly(
            "ptr", [](const PyLayout& l) { return reinterpret_cast<uintptr_t>(l.layout->rawptr()); },
            "Address of the first element.")
        .def_property_readonly(
            "nbytes", [](const PyLayout& l) { return l.layout->element_size() * l.layout->elements(); },
            "Bytes of the elements (element_size x product of dims).")
        .def_property_readonly("extent", [](const PyLayout& l) { return l.layout->extent_bytes(); },
                               "Bytes from ptr to the end of the last element.")
        .def_property_readonly("contiguous", [](const PyLayout& l) { return l.layout->contiguous(); },
                               "True when the elements are packed without gaps.")
        .def_property_readonly("buffer", [](const PyLayout& l) { return l.buffer; }, "The Buffer it describes.")
        .def("__repr__", [](const PyLayout& l) {
            return "<zehal.Layout dense " + pyb::repr(pyb::tuple(pyb::cast(l.layout->dims()))).cast<std::string>() +
                   " element_size=" + std::to_string(l.layout->element_size()) +
                   " order=" + (l.layout->order() == aml::Layout::kRowMajor ? "'C'>" : "'F'>");
        });
}

void bind_dma(pyb::module_& m) {
    pyb::class_<RequestHolder>(m, "Request",
                               "A submitted copy. A pending request keeps its operands alive. wait() is idempotent "
                               "and releases the GIL; after cancel(), done is True and wait() returns at once.")
        .def("wait", [](RequestHolder& h, std::optional<double> timeout) { h.request.wait(timeout); },
             pyb::arg("timeout") = pyb::none(),
             "Waits until the copy completed (timeout in seconds; None: forever). NotReadyError on timeout; raises "
             "the copy's error (DeviceLostError, ...).")
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

    pyb::class_<PyDma>(m, "Dma",
                       "An engine: asynchronous copies on engine `index` of engine group `ordinal` (1: copy "
                       "engines, 0: compute engines) of a device. Copies complete in submission order; many "
                       "threads may submit at once.")
        .def(pyb::init<const hal::DeviceRef&, pyb::handle, pyb::handle>(), pyb::arg("device") = pyb::none(),
             pyb::arg("ordinal") = 1, pyb::arg("index") = 0)
        .def_static("default", &PyDma::make_default,
                    "An engine as aml_dma_ze_default: copy engine 0 of the default device.")
        .def(
            "copy",
            [](pyb::object self, pyb::object dst, pyb::object src, pyb::handle nbytes, const std::string& op,
               bool request, const hal::EventRef& signal, pyb::handle dst_offset,
               pyb::handle src_offset) -> pyb::object {
                std::optional<PyRequest> r =
                    self.cast<PyDma&>().copy(dst, src, nbytes, op, request, signal, dst_offset, src_offset);
                if (!r) return pyb::none();
                return pyb::cast(RequestHolder{std::move(*r), self});
            },
            pyb::arg("dst"), pyb::arg("src"), pyb::arg("nbytes") = pyb::none(), pyb::kw_only(),
            pyb::arg("op") = "copy_1D", pyb::arg("request") = true, pyb::arg("signal") = pyb::none(),
            pyb::arg("dst_offset") = 0, pyb::arg("src_offset") = 0,
            "Copies src into dst (Buffers, or one-dimensional Layouts for copy_1D) and returns at once: a Request, "
            "or None with request=False (fire-and-forget: barrier() waits for it). nbytes: bytes to copy (None: "
            "the rest of src; must fit both). op: 'copy_1D' or 'memcpy'. signal: an Event the copy itself "
            "signals. dst_offset, src_offset: bytes skipped at the start of each operand.")
        .def("barrier", &PyDma::barrier,
             "Waits (without the GIL) until every copy submitted before it completed, fire-and-forget ones too.")
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
}

}  // namespace

void bind_aml(pyb::module_& m) {
    bind_buffer(m);
    bind_area(m);
    bind_layout(m);
    bind_dma(m);
}

}  // namespace zehal::py
