// Area and Layout from Python: device, shared and host areas, their buffers, dense layouts.
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
#include "hal/import_fd.hpp"
#include "hal/registry.hpp"
#include "python/buffer.hpp"
#include "python/fast_call.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/layout_object.hpp"

namespace zehal::py {
namespace {

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
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT,
              std::string(what) + ": ordinal = " + std::to_string(o) + " (the device has " +
                  std::to_string(d->properties().memory_ordinals) + " memory ordinals)");
    std::shared_ptr<aml::Area> area;
    check(aml::Area::create(d, kind, o, f, a, &area), what);
    return area;
}

// Area.mmap(nbytes), called through vectorcall (python/fast_call.hpp): a pooled mapping
// costs less than pybind11's dispatch of it.
PyObject* area_mmap(PyObject* self, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
    static const FastParams params({"nbytes"}, 1, 1);
    return fast_call<1>(params, "Area.mmap()", args, nargs, kwnames, [&](const auto& a) -> PyObject* {
        const std::shared_ptr<aml::Area>& area = holder_of<aml::Area>(self, "Area.mmap");
        const auto n = int_arg<size_t>(a[0], "Area.mmap: nbytes", ZE_RESULT_ERROR_INVALID_SIZE);
        void* p = nullptr;
        check(area->map(n, &p), area->closed() ? "Area.mmap: the area is closed" : "Area.mmap");
        return cast_holder(std::make_shared<Buffer>(area, p, n));
    });
}

PyMethodDef kAreaMmapDef = {
    "mmap", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&area_mmap)), METH_FASTCALL | METH_KEYWORDS,
    "mmap($self, nbytes)\n--\n\n"
    "A Buffer of `nbytes` bytes (0: an empty buffer, nothing mapped). OutOfMemoryError when the device is full."};

void area_munmap(const std::shared_ptr<aml::Area>& area, Buffer& buffer) {
    if (buffer.area() != area) check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "Area.munmap: the buffer is of another area");
    if (buffer.closed()) check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "Area.munmap: the buffer is already unmapped");
    buffer.close();
}

// The message of a refused import: the fd or the size at fault, with its value.
std::string import_refusal(ze_result_t r, int fd, size_t size) {
    std::string what = "Area.import_dma_buf";
    uint64_t bytes = 0;
    const bool importable = hal::check_import_fd(fd, &bytes) == ZE_RESULT_SUCCESS;
    if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT && !importable)
        return what + ": fd = " + std::to_string(fd) +
               " is neither a dma-buf nor a memfd sealed with F_SEAL_SHRINK (memory that could shrink is refused)";
    if (r == ZE_RESULT_ERROR_INVALID_SIZE && importable)
        return what + ": size = " + std::to_string(size) + " (fd " + std::to_string(fd) + " holds " +
               std::to_string(bytes) + " bytes)";
    return what;
}

BufferRef import_dma_buf(pyb::handle fd, pyb::handle size, const hal::DeviceRef& device) {
    const auto f = int_arg<int>(fd, "Area.import_dma_buf: fd");
    const auto n = int_arg<size_t>(size, "Area.import_dma_buf: size", ZE_RESULT_ERROR_INVALID_SIZE);
    std::shared_ptr<aml::Area> area;
    // Imported pages are page aligned (Level Zero asks for 4096).
    check(aml::Area::create(device_or_default(device), hal::MemoryKind::device, 0, 0, 4096, &area),
          "Area.import_dma_buf");
    void* p = nullptr;
    if (ze_result_t r = area->import_dma_buf(f, n, &p); r != ZE_RESULT_SUCCESS) check(r, import_refusal(r, f, n));
    return std::make_shared<Buffer>(area, p, n);
}

// --- Layout ---------------------------------------------------------------------------

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
    // Read once the arguments are converted: their __index__ or __iter__ may close the buffer.
    void* ptr = buffer->live("Layout.dense");
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
    std::vector<size_t> coords;
    if (args.size() == 1 && !PyLong_Check(args[0].ptr()))
        coords = size_list(args[0], "Layout.deref: coordinate");
    else
        for (pyb::handle a : args) coords.push_back(int_arg<size_t>(a, "Layout.deref: coordinate"));
    // Checked once the coordinates are converted: their __index__ may close the buffer.
    l.buffer->live("Layout.deref");
    void* p = nullptr;
    const int r = l.layout->deref(coords, &p);
    if (r == -AML_EDOM) check_aml(r, "Layout.deref: a coordinate is out of its dimension (AML_EDOM)");
    if (r == -AML_EINVAL) check_aml(r, "Layout.deref: one coordinate per dimension is needed");
    check_aml(r, "Layout.deref");
    return reinterpret_cast<uintptr_t>(p);
}

}  // namespace

void bind_area(pyb::module_& m) {
    using aml::Area;
    using AreaRef = std::shared_ptr<Area>;
    auto cls =
        pyb::class_<Area, AreaRef>(
            m, "Area",
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
                "Host memory of the default backend, usable by every device of every backend.")
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
            .def_static(
                "_import_dma_buf", &import_dma_buf, pyb::arg("fd"), pyb::arg("size"), pyb::arg("device") = pyb::none(),
                "Device memory over the pages of dma-buf `fd` (not taken over: the caller keeps and closes it), "
                "as a Buffer of kind 'device'.")
            .def(
                "munmap", &area_munmap, pyb::arg("buffer"),
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
            .def("__enter__", &enter<Area>)
            .def("__exit__", [](Area& a, pyb::args) { a.close(); })
            .def(
                "fprintf",
                [](const Area& a) {
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
                },
                "The description aml_area_fprintf prints (kind, backend, device, alignment, flags).")
            .def("__repr__", [](const Area& a) {
                return "<zehal.Area " + std::string(aml::kind_name(a.kind())) +
                       " alignment=" + std::to_string(a.alignment()) + " on " +
                       std::string(a.device()->backend_name()) + (a.closed() ? " closed>" : ">");
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
    add_fast_method(cls, &kAreaMmapDef);
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
        .def_property_readonly(
            "dims", [](const PyLayout& l) { return pyb::tuple(pyb::cast(l.layout->dims())); },
            "Dimensions in user order.")
        .def_property_readonly(
            "ndims", [](const PyLayout& l) { return l.layout->ndims(); }, "Number of dimensions.")
        .def_property_readonly(
            "element_size", [](const PyLayout& l) { return l.layout->element_size(); }, "Bytes of one element.")
        .def_property_readonly(
            "order", [](const PyLayout& l) { return l.layout->order() == aml::Layout::kRowMajor ? "C" : "F"; },
            "'C' or 'F'.")
        .def_property_readonly(
            "ptr", [](const PyLayout& l) { return reinterpret_cast<uintptr_t>(l.layout->rawptr()); },
            "Address of the first element.")
        .def_property_readonly(
            "nbytes", [](const PyLayout& l) { return l.layout->element_size() * l.layout->elements(); },
            "Bytes of the elements (element_size x product of dims).")
        .def_property_readonly(
            "extent", [](const PyLayout& l) { return l.layout->extent_bytes(); },
            "Bytes from ptr to the end of the last element.")
        .def_property_readonly(
            "contiguous", [](const PyLayout& l) { return l.layout->contiguous(); },
            "True when the elements are packed without gaps.")
        .def_property_readonly(
            "buffer", [](const PyLayout& l) { return l.buffer; }, "The Buffer it describes.")
        .def("__repr__", [](const PyLayout& l) {
            return "<zehal.Layout dense " + pyb::repr(pyb::tuple(pyb::cast(l.layout->dims()))).cast<std::string>() +
                   " element_size=" + std::to_string(l.layout->element_size()) +
                   " order=" + (l.layout->order() == aml::Layout::kRowMajor ? "'C'>" : "'F'>");
        });
}

}  // namespace zehal::py
