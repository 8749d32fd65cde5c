// Modules and kernels from Python (contract §12): zehal.Module from SPIR-V (or the
// backend's native format), Module.kernel(name), Dma.launch, which converts every Python
// argument before it touches a kernel or an engine, and Device.mark_start / mark_end,
// which time the user's own kernels on a foreign stream.
#include <pybind11/stl.h>

#include <array>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "compiler/spirv_specialization.hpp"
#include "hal/module.hpp"
#include "python/buffer.hpp"
#include "python/dlpack.hpp"
#include "python/fast_call.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/submission.hpp"

namespace zehal::py {
namespace {

// A module as Python holds it: the device's module and the device it was built for.
struct PyModule {
    hal::ModuleRef module;
    hal::DeviceRef device;
};

// A kernel as Python holds it; the HAL kernel keeps its module alive.
struct PyKernel {
    hal::KernelRef kernel;
    hal::DeviceRef device;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyModule)
ZEHAL_PY_MADE_CASTER(zehal::py::PyKernel)

namespace zehal::py {
namespace {

const char* kind_name(hal::KernelArgKind kind) {
    switch (kind) {
        case hal::KernelArgKind::value:
            return "value";
        case hal::KernelArgKind::global:
            return "global";
        case hal::KernelArgKind::constant:
            return "constant";
        case hal::KernelArgKind::local:
            return "local";
        case hal::KernelArgKind::image:
            return "image";
        case hal::KernelArgKind::sampler:
            return "sampler";
    }
    return "unknown";
}

// The bytes of `binary`: bytes-like objects as they are, a str (PTX text) as UTF-8.
std::vector<uint8_t> binary_bytes(pyb::handle binary) {
    if (PyUnicode_Check(binary.ptr())) {
        Py_ssize_t n = 0;
        const char* text = PyUnicode_AsUTF8AndSize(binary.ptr(), &n);
        if (!text) throw pyb::error_already_set();
        return {text, text + n};
    }
    if (!PyObject_CheckBuffer(binary.ptr()))
        throw pyb::type_error("Module: binary must be bytes-like (SPIR-V, cubin) or str (PTX text), not " +
                              std::string(Py_TYPE(binary.ptr())->tp_name));
    Py_buffer view;
    if (PyObject_GetBuffer(binary.ptr(), &view, PyBUF_C_CONTIGUOUS) != 0) throw pyb::error_already_set();
    const auto* p = static_cast<const uint8_t*>(view.buf);
    std::vector<uint8_t> bytes(p, p + view.len);
    PyBuffer_Release(&view);
    return bytes;
}

// Raises the error of `r` for `what` (Module(...) unless told), with `log` in the message and
// in the exception's `log`.
[[noreturn]] void module_error(ze_result_t r, const std::string& log, const std::string& what = "Module") {
    try {
        check(r, what + (log.empty() ? std::string() : ": " + log));
    } catch (pyb::error_already_set& e) {
        e.value().attr("log") = pyb::str(log);
        throw;
    }
    throw std::logic_error("check() returned for an error");
}

// IEEE half precision of `v`, little-endian, at `out` (-1 with a Python error when out of
// range): PyFloat_Pack2, public since Python 3.11.
int pack_half(double v, uint8_t* out) {
#if PY_VERSION_HEX >= 0x030B0000
    return PyFloat_Pack2(v, reinterpret_cast<char*>(out), 1);
#else
    return _PyFloat_Pack2(v, out, 1);
#endif
}

// The 8 bytes a specialization constant of `type` reads its value from (its low bytes,
// little-endian): a boolean's truth, an integer in the range of its width (signed or
// unsigned), a float in its precision. A constant the module does not declare (type null)
// takes an int as it is; specialize_spirv then refuses the id.
std::array<uint8_t, 8> constant_bytes(pyb::handle value, const compiler::SpecConstantType* type,
                                      const std::string& what) {
    std::array<uint8_t, 8> out{};
    if (type && type->kind == compiler::SpecConstantType::boolean) {
        const int truth = PyObject_IsTrue(value.ptr());
        if (truth < 0) throw pyb::error_already_set();
        out[0] = static_cast<uint8_t>(truth);
        return out;
    }
    if (type && type->kind == compiler::SpecConstantType::floating) {
        const double v = PyFloat_AsDouble(value.ptr());
        if (v == -1.0 && PyErr_Occurred()) throw pyb::error_already_set();
        if (type->bits == 64) {
            std::memcpy(out.data(), &v, sizeof v);
        } else if (type->bits == 32) {
            const auto f = static_cast<float>(v);
            std::memcpy(out.data(), &f, sizeof f);
        } else if (pack_half(v, out.data()) != 0) {
            throw pyb::error_already_set();  // 16 bits: out of half's range
        }
        return out;
    }
    if (!PyIndex_Check(value.ptr())) throw pyb::type_error(what + " must be an int");
    pyb::int_ number = pyb::reinterpret_steal<pyb::int_>(PyNumber_Index(value.ptr()));
    if (!number) throw pyb::error_already_set();
    const unsigned bits = type ? std::min(type->bits, 64u) : 64u;
    // Either an unsigned value of `bits` bits or a signed one: [-2^(bits-1), 2^bits - 1].
    const pyb::int_ low(-(pyb::int_(1).attr("__lshift__")(bits - 1)));
    const pyb::int_ high(pyb::int_(1).attr("__lshift__")(bits) - pyb::int_(1));
    if (number < low || number > high)
        throw pyb::value_error(what + " does not fit the constant's " + std::to_string(bits) + " bits");
    const pyb::int_ mask(pyb::int_(1).attr("__lshift__")(64) - pyb::int_(1));
    const auto word = (number & mask).cast<uint64_t>();
    std::memcpy(out.data(), &word, sizeof word);
    return out;
}

// `spirv` with the specialization constants of `constants` ({SpecId: value}) set
// (compiler::specialize_spirv): InvalidArgumentError naming an id the module lacks.
std::vector<uint8_t> specialized(const std::vector<uint8_t>& spirv, pyb::handle constants) {
    if (!PyMapping_Check(constants.ptr()) || PySequence_Check(constants.ptr()))
        throw pyb::type_error("Module: constants must be a mapping {id: value}");
    const std::map<uint32_t, compiler::SpecConstantType> types = compiler::spec_constant_types(spirv);
    std::vector<uint32_t> ids;
    std::vector<std::array<uint8_t, 8>> values;
    pyb::object items = pyb::reinterpret_steal<pyb::object>(PyMapping_Items(constants.ptr()));
    if (!items) throw pyb::error_already_set();
    for (pyb::handle item : items) {
        pyb::tuple pair = pyb::reinterpret_borrow<pyb::tuple>(item);
        const auto id = int_arg<uint32_t>(pair[0], "Module: a specialization constant id");
        const auto type = types.find(id);
        values.push_back(constant_bytes(pair[1], type == types.end() ? nullptr : &type->second,
                                        "Module: the value of specialization constant " + std::to_string(id)));
        ids.push_back(id);
    }
    std::vector<const void*> pointers;
    for (const auto& v : values) pointers.push_back(v.data());
    std::vector<uint8_t> out;
    std::string log;
    if (ze_result_t r = compiler::specialize_spirv(spirv, ids, pointers, &out, &log); r != ZE_RESULT_SUCCESS)
        module_error(r, log);
    return out;
}

// Builds a module without the GIL (a build may compile for seconds), specialized first
// when `constants` are given. A failed build raises ModuleBuildError (UnsupportedError where
// the device cannot build the format) with the build log in the message and in the
// exception's `log`.
std::unique_ptr<PyModule> make_module(const hal::DeviceRef& device, pyb::handle binary, std::string_view format,
                                      std::string build_flags, pyb::handle constants) {
    hal::ModuleFormat f = hal::ModuleFormat::spirv;
    if (format == "native")
        f = hal::ModuleFormat::native;
    else if (format != "spirv")
        check(ZE_RESULT_ERROR_INVALID_ENUMERATION,
              "Module: format must be 'spirv' or 'native', not '" + std::string(format) + "'");
    std::vector<uint8_t> bytes = binary_bytes(binary);
    if (!constants.is_none()) {
        if (f == hal::ModuleFormat::native)
            check(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
                  "Module: specialization constants apply to SPIR-V modules, not native ones");
        bytes = specialized(bytes, constants);
    }
    auto m = std::make_unique<PyModule>();
    m->device = device_or_default(device);
    std::string log;
    const ze_result_t r = without_gil(
        [&] { return m->device->create_module(f, bytes, build_flags, &m->module, &log); });
    if (r != ZE_RESULT_SUCCESS) module_error(r, log);
    return m;
}

// Links `modules` (hal::link_modules) without the GIL: a link compiles the importers. A
// failure raises ModuleBuildError with the link log.
void link_modules(const pyb::sequence& modules) {
    std::vector<hal::ModuleRef> list;
    for (const pyb::handle item : modules) {
        if (!pyb::isinstance<PyModule>(item))
            throw pyb::type_error("Module.link: modules must be zehal.Module objects, not " +
                                  std::string(pyb::str(pyb::type::of(item).attr("__name__"))));
        list.push_back(item.cast<const PyModule&>().module);
    }
    std::string log;
    const ze_result_t r = without_gil([&] { return hal::link_modules(list, &log); });
    if (r != ZE_RESULT_SUCCESS) module_error(r, log, "Module.link");
}

std::unique_ptr<PyKernel> make_kernel(const PyModule& m, const std::string& name) {
    auto k = std::make_unique<PyKernel>();
    k->device = m.device;
    check(m.module->create_kernel(name, &k->kernel), "Module.kernel('" + name + "')");
    return k;
}

// Group counts, sizes or offsets: an int (x), or a sequence of one to three ints (x, y, z);
// missing dimensions are `missing` (1 for counts and sizes, 0 for offsets).
std::array<uint32_t, 3> dims_arg(pyb::handle obj, std::string_view what, uint32_t missing = 1) {
    std::array<uint32_t, 3> d{missing, missing, missing};
    if (PyLong_Check(obj.ptr()) || PyIndex_Check(obj.ptr())) {
        d[0] = int_arg<uint32_t>(obj, what);
        return d;
    }
    if (!PySequence_Check(obj.ptr())) throw pyb::type_error(std::string(what) + " must be an int or 1 to 3 ints");
    pyb::sequence seq = pyb::reinterpret_borrow<pyb::sequence>(obj);
    if (seq.size() < 1 || seq.size() > 3) throw pyb::type_error(std::string(what) + " must be an int or 1 to 3 ints");
    for (size_t i = 0; i < seq.size(); ++i) d[i] = int_arg<uint32_t>(seq[i], what);
    return d;
}

// --- Arguments ---------------------------------------------------------------------------

// One argument of a launch, converted from Python; its native state (a Buffer's pointer)
// is read only when the launch is appended.
struct ArgValue {
    size_t size = 0;
    std::vector<uint8_t> bytes;  // value arguments; pointers from anything but a Buffer
    Buffer* buffer = nullptr;    // a pointer argument given as a zehal Buffer
    bool null = false;           // a null pointer, or a local argument (size = byte count)
};

[[noreturn]] void bad_size(std::string_view what, size_t given, uint32_t wanted) {
    check(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE, std::string(what) + ": " + std::to_string(given) +
                                                            " bytes given, the kernel takes " + std::to_string(wanted));
    throw pyb::error_already_set();
}

// A Python int into `size` little-endian bytes: in range of a signed or unsigned integer
// of that size.
std::vector<uint8_t> int_bytes(pyb::handle obj, uint32_t size, std::string_view what) {
    if (size != 1 && size != 2 && size != 4 && size != 8) bad_size(what, sizeof(uint64_t), size);
    auto index = pyb::reinterpret_steal<pyb::object>(PyNumber_Index(obj.ptr()));
    if (!index) throw pyb::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (v == -1 && PyErr_Occurred()) throw pyb::error_already_set();
    const std::string range = std::string(what) + " = " + pyb::repr(index).cast<std::string>() + " does not fit " +
                              std::to_string(size) + " bytes";
    uint64_t bits = static_cast<uint64_t>(v);
    if (overflow > 0 && size == sizeof(uint64_t))
        bits = int_arg<uint64_t>(index, what);  // up to 2^64 - 1
    else if (overflow != 0)
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT, range);
    else if (size < sizeof(uint64_t) && (v < -(1LL << (8 * size - 1)) || v > (1LL << (8 * size)) - 1))
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT, range);
    std::vector<uint8_t> out(size);
    std::memcpy(out.data(), &bits, size);  // little-endian hosts: the low bytes
    return out;
}

// A value argument: a Python int or float sized by the signature, or anything of the
// buffer protocol of exactly the argument's size (a NumPy scalar or array, bytes).
ArgValue value_arg(pyb::handle obj, uint32_t size, std::string_view what) {
    ArgValue a;
    a.size = size;
    PyObject* o = obj.ptr();
    const bool exact_number = PyLong_CheckExact(o) || PyBool_Check(o) || PyFloat_CheckExact(o);
    if (!exact_number && PyObject_CheckBuffer(o)) {
        Py_buffer view;
        if (PyObject_GetBuffer(o, &view, PyBUF_C_CONTIGUOUS) != 0) throw pyb::error_already_set();
        const auto* p = static_cast<const uint8_t*>(view.buf);
        a.bytes.assign(p, p + view.len);
        PyBuffer_Release(&view);
        if (a.bytes.size() != size) bad_size(what, a.bytes.size(), size);
        return a;
    }
    if (PyFloat_Check(o)) {
        const double v = PyFloat_AsDouble(o);
        if (size == sizeof(double)) {
            a.bytes.resize(sizeof v);
            std::memcpy(a.bytes.data(), &v, sizeof v);
        } else if (size == sizeof(float)) {
            const auto f = static_cast<float>(v);
            a.bytes.resize(sizeof f);
            std::memcpy(a.bytes.data(), &f, sizeof f);
        } else {
            bad_size(what, sizeof(double), size);
        }
        return a;
    }
    if (PyLong_Check(o) || PyIndex_Check(o)) {
        a.bytes = int_bytes(obj, size, what);
        return a;
    }
    throw pyb::type_error(std::string(what) +
                          " is passed by value: an int, a float, or a NumPy scalar or bytes of its size, not " +
                          Py_TYPE(o)->tp_name);
}

// The data pointer of a DLPack capsule (legacy or versioned), left unconsumed: the capsule,
// kept with the launch, frees its tensor when it goes.
void* dlpack_pointer(pyb::handle capsule, std::string_view what) {
    PyObject* c = capsule.ptr();
    if (PyCapsule_IsValid(c, "dltensor")) {
        auto* t = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(c, "dltensor"));
        return static_cast<char*>(t->dl_tensor.data) + t->dl_tensor.byte_offset;
    }
    if (PyCapsule_IsValid(c, "dltensor_versioned")) {
        auto* t = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(c, "dltensor_versioned"));
        return static_cast<char*>(t->dl_tensor.data) + t->dl_tensor.byte_offset;
    }
    throw pyb::type_error(std::string(what) + ": __dlpack__ returned no DLPack capsule");
}

// A pointer argument: None (null), a zehal Buffer, an object with __cuda_array_interface__
// or __dlpack__ (its data pointer; the object or capsule is kept in `keep` until the launch
// completes), or an int (a raw device address the caller keeps valid).
ArgValue pointer_arg(pyb::handle obj, uint32_t size, std::string_view what, pyb::list& keep) {
    ArgValue a;
    a.size = size;
    if (size != sizeof(void*)) bad_size(what, sizeof(void*), size);
    if (obj.is_none()) {
        a.null = true;
        return a;
    }
    if ((a.buffer = instance_of<Buffer>(obj.ptr()))) return a;
    if (PyObject_TypeCheck(obj.ptr(), type_of<Buffer>().type))
        throw pyb::type_error(std::string(what) + ": the Buffer was not initialized");
    uintptr_t address = 0;
    if (PyLong_Check(obj.ptr())) {
        address = int_arg<uintptr_t>(obj, what);
    } else if (pyb::hasattr(obj, "__cuda_array_interface__")) {
        pyb::dict cai = obj.attr("__cuda_array_interface__");
        address = int_arg<uintptr_t>(pyb::tuple(cai["data"])[0], what);
    } else if (pyb::hasattr(obj, "__dlpack__")) {
        pyb::object capsule = obj.attr("__dlpack__")();
        address = reinterpret_cast<uintptr_t>(dlpack_pointer(capsule, what));
        keep.append(capsule);
    } else {
        throw pyb::type_error(std::string(what) +
                              " is a pointer: a zehal.Buffer, an object with __cuda_array_interface__ or "
                              "__dlpack__, an int address, or None, not " +
                              Py_TYPE(obj.ptr())->tp_name);
    }
    a.bytes.resize(sizeof address);
    std::memcpy(a.bytes.data(), &address, sizeof address);
    a.null = address == 0;
    return a;
}

// An argument whose signature the backend does not know (kind value, size 0: the
// level_zero backend, as Level Zero reports no argument types): pointer-like objects as
// pointers, a Python int as 4 bytes where it fits a 32-bit integer (else 8), a float as 4
// bytes (OpenCL's float), anything of the buffer protocol as its bytes; the device's
// driver then checks the size.
ArgValue inferred_arg(pyb::handle obj, std::string_view what, pyb::list& keep) {
    PyObject* o = obj.ptr();
    if (obj.is_none() || instance_of<Buffer>(o) || pyb::hasattr(obj, "__cuda_array_interface__") ||
        pyb::hasattr(obj, "__dlpack__"))
        return pointer_arg(obj, sizeof(void*), what, keep);
    if (PyLong_CheckExact(o) || PyBool_Check(o)) {
        int overflow = 0;
        const long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
        if (v == -1 && PyErr_Occurred()) throw pyb::error_already_set();
        const bool fits32 = overflow == 0 && v >= INT32_MIN && v <= static_cast<long long>(UINT32_MAX);
        return value_arg(obj, fits32 ? sizeof(uint32_t) : sizeof(uint64_t), what);
    }
    if (PyFloat_CheckExact(o)) return value_arg(obj, sizeof(float), what);
    if (PyObject_CheckBuffer(o)) {
        Py_buffer view;
        if (PyObject_GetBuffer(o, &view, PyBUF_C_CONTIGUOUS) != 0) throw pyb::error_already_set();
        const auto size = static_cast<uint32_t>(view.len);
        PyBuffer_Release(&view);
        return value_arg(obj, size, what);
    }
    return value_arg(obj, sizeof(uint64_t), what);  // raises TypeError for what it cannot pass
}

// Every argument of a launch of `k`, converted in order; INVALID_KERNEL_ARGUMENT_INDEX when
// their number is not the kernel's.
std::vector<ArgValue> launch_args(const PyKernel& k, pyb::handle args, pyb::list& keep) {
    const hal::KernelProperties& p = k.kernel->properties();
    pyb::tuple given = args.is_none() ? pyb::tuple() : pyb::tuple(pyb::reinterpret_borrow<pyb::object>(args));
    if (given.size() != p.args.size())
        check(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX, "Dma.launch: kernel '" + p.name + "' takes " +
                                                                 std::to_string(p.args.size()) + " arguments, " +
                                                                 std::to_string(given.size()) + " given");
    std::vector<ArgValue> out;
    out.reserve(given.size());
    for (size_t i = 0; i < given.size(); ++i) {
        const std::string what = "Dma.launch: argument " + std::to_string(i) + " of '" + p.name + "'";
        const hal::KernelArg& sig = p.args[i];
        switch (sig.kind) {
            case hal::KernelArgKind::value:
                out.push_back(sig.size == 0 ? inferred_arg(given[i], what, keep) : value_arg(given[i], sig.size, what));
                break;
            case hal::KernelArgKind::global:
            case hal::KernelArgKind::constant:
                out.push_back(pointer_arg(given[i], sig.size, what, keep));
                break;
            case hal::KernelArgKind::local: {
                ArgValue a;
                a.size = int_arg<size_t>(given[i], what + " (local memory bytes)", ZE_RESULT_ERROR_INVALID_SIZE);
                a.null = true;
                out.push_back(std::move(a));
                break;
            }
            default:
                check(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, what + ": " + kind_name(sig.kind) + " arguments");
        }
    }
    return out;
}

// How a launch is appended once its kernel's arguments are set: a direct launch over fixed
// group counts, or an indirect one over counts read from memory when it runs.
using LaunchAppend = std::function<ze_result_t(aml::Dma&, const hal::KernelRef&, std::shared_ptr<aml::Request>*,
                                               const hal::EventRef&, aml::Request::KeepAlive)>;

// Dma.launch and Dma.launch_indirect: every Python argument converted first; then, with no
// Python code between, the kernel's arguments and group size are set and `append` appends
// the launch (the queue takes a snapshot, so another launch of the same kernel may set its
// own arguments next). `operand` is one more Python object the launch keeps alive.
pyb::object submit_launch(pyb::handle self, pyb::handle kernel_obj, pyb::handle args, pyb::handle group_size,
                          bool request, pyb::handle signal, std::string_view what, pyb::handle operand,
                          Buffer* operand_buffer, LaunchAppend append) {
    const std::string name(what);
    PyKernel* made = instance_of<PyKernel>(kernel_obj.ptr());
    if (!made) throw pyb::type_error(name + ": kernel must be a zehal.Kernel");
    PyKernel& k = *made;
    const bool set_size = !group_size.is_none();
    const std::array<uint32_t, 3> size = set_size ? dims_arg(group_size, name + ": group_size")
                                                  : std::array<uint32_t, 3>{};
    hal::EventRef event;
    if (!signal.is_none()) {
        if (!pyb::isinstance<hal::Event>(signal)) throw pyb::type_error(name + ": signal must be a zehal.Event");
        event = signal.cast<hal::EventRef>();
    }
    pyb::list capsules;
    auto values = std::make_shared<std::vector<ArgValue>>(launch_args(k, args, capsules));
    Submission s;
    s.what = what;
    for (const ArgValue& a : *values)
        if (a.buffer) s.users.push_back(a.buffer);
    if (operand_buffer) s.users.push_back(operand_buffer);
    s.operands.dst = pyb::make_tuple(args, capsules, operand);
    s.operands.src = pyb::reinterpret_borrow<pyb::object>(kernel_obj);
    hal::KernelRef kernel = k.kernel;
    hal::DeviceRef device = k.device;
    s.append = [=](aml::Dma& dma, std::shared_ptr<aml::Request>* out, aml::Request::KeepAlive keep) -> ze_result_t {
        if (dma.device() != device)
            check(ZE_RESULT_ERROR_INVALID_ARGUMENT, name + ": the kernel was built for another device");
        for (size_t i = 0; i < values->size(); ++i) {
            ArgValue& a = (*values)[i];
            const void* value = a.null ? nullptr : a.bytes.data();
            if (a.buffer) {
                void* ptr = a.buffer->for_copy(name + ": argument " + std::to_string(i));
                a.bytes.assign(reinterpret_cast<uint8_t*>(&ptr), reinterpret_cast<uint8_t*>(&ptr) + sizeof ptr);
                value = a.bytes.data();
            }
            check(kernel->set_argument(static_cast<uint32_t>(i), a.size, value),
                  name + ": argument " + std::to_string(i) + " of '" + kernel->properties().name + "'");
        }
        if (set_size) check(kernel->set_group_size(size[0], size[1], size[2]), name + ": group_size");
        return append(dma, kernel, out, event, std::move(keep));
    };
    return pyb::reinterpret_steal<pyb::object>(submit_on_dma(self.ptr(), std::move(s), request));
}

// Dma.launch: over `groups` given now.
pyb::object dma_launch(pyb::handle self, pyb::handle kernel_obj, pyb::handle groups, pyb::handle args,
                       pyb::handle group_size, bool request, pyb::handle signal) {
    const hal::GroupCount counts = dims_arg(groups, "Dma.launch: groups");
    return submit_launch(self, kernel_obj, args, group_size, request, signal, "Dma.launch", pyb::none(), nullptr,
                         [counts](aml::Dma& dma, const hal::KernelRef& kernel, std::shared_ptr<aml::Request>* out,
                                  const hal::EventRef& event, aml::Request::KeepAlive keep) {
                             return dma.launch(*kernel, counts, out, event, std::move(keep));
                         });
}

// Dma.launch_indirect: over the three uint32 group counts at `groups` (a Buffer or any
// pointer a kernel argument takes), read when the launch runs.
pyb::object dma_launch_indirect(pyb::handle self, pyb::handle kernel_obj, pyb::handle groups, pyb::handle args,
                                pyb::handle group_size, bool request, pyb::handle signal) {
    constexpr std::string_view what = "Dma.launch_indirect";
    if (groups.is_none()) throw pyb::type_error("Dma.launch_indirect: groups must be memory holding 3 uint32");
    pyb::list keep;
    auto counts = std::make_shared<ArgValue>(pointer_arg(groups, sizeof(void*), "Dma.launch_indirect: groups", keep));
    return submit_launch(
        self, kernel_obj, args, group_size, request, signal, what, pyb::make_tuple(groups, keep), counts->buffer,
        [counts](aml::Dma& dma, const hal::KernelRef& kernel, std::shared_ptr<aml::Request>* out,
                 const hal::EventRef& event, aml::Request::KeepAlive keep) {
            void* at = nullptr;
            if (counts->buffer)
                at = counts->buffer->for_copy("Dma.launch_indirect: groups");
            else
                std::memcpy(&at, counts->bytes.data(), sizeof at);
            return dma.launch_indirect(kernel, static_cast<const hal::GroupCount*>(at), out, event, std::move(keep));
        });
}

// A foreign stream: a raw CUstream as an int (0: CUDA's legacy default stream), or an
// object of the __cuda_stream__ protocol (a method returning (version, handle)).
uintptr_t stream_arg(pyb::handle stream, std::string_view what) {
    if (PyLong_Check(stream.ptr())) return int_arg<uintptr_t>(stream, what);
    if (pyb::hasattr(stream, "__cuda_stream__")) {
        pyb::tuple t = stream.attr("__cuda_stream__")();
        if (t.size() != 2) throw pyb::type_error(std::string(what) + ": __cuda_stream__ must return (version, handle)");
        return int_arg<uintptr_t>(t[1], what);
    }
    throw pyb::type_error(std::string(what) +
                          ": the stream must be an int (a CUstream) or have __cuda_stream__ (PyTorch: "
                          "stream.cuda_stream, CuPy: stream.ptr)");
}

// Device.mark_start / mark_end: `event`'s start, or its end and signal, in `stream`'s order.
void mark_stream(const hal::DeviceRef& device, pyb::handle stream, pyb::handle event, hal::StreamMark mark) {
    const char* what = mark == hal::StreamMark::start ? "Device.mark_start" : "Device.mark_end";
    const uintptr_t s = stream_arg(stream, what);
    if (!pyb::isinstance<hal::Event>(event)) throw pyb::type_error(std::string(what) + ": event must be a zehal.Event");
    const hal::EventRef e = event.cast<hal::EventRef>();
    check(device->record_on_stream(s, e, mark), what);
}

}  // namespace

void bind_kernels(pyb::module_& m) {
    pyb::class_<PyModule>(m, "Module",
                          "Code built for one device from SPIR-V (format='spirv') or the backend's native format "
                          "(format='native': PTX text or cubin on CUDA); kernels are taken from it by name. "
                          "constants: the SPIR-V's specialization constants, {SpecId: value} (bool, int or float, "
                          "as the constant's type).")
        .def(pyb::init(&make_module), pyb::arg("device"), pyb::arg("binary"), pyb::kw_only(),
             pyb::arg("format") = "spirv", pyb::arg("build_flags") = "", pyb::arg("constants") = pyb::none())
        .def_property_readonly(
            "device", [](const PyModule& m) { return m.device; }, "The device it was built for.")
        .def_property_readonly(
            "kernel_names", [](const PyModule& m) { return m.module->kernel_names(); },
            "Names of its kernels, in the binary's order.")
        .def(
            "native_binary",
            [](const PyModule& m) {
                const std::span<const uint8_t> b = m.module->native_binary();
                return pyb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
            },
            "The device-specific binary (PTX on CUDA, the SPIR-V on sim), which Module(..., format='native') "
            "takes back where the backend accepts it.")
        .def(
            "global_pointer",
            [](const PyModule& m, const std::string& name) {
                size_t size = 0;
                void* pointer = nullptr;
                check(m.module->global_pointer(name, &size, &pointer), "Module.global_pointer('" + name + "')");
                return pyb::make_tuple(reinterpret_cast<uintptr_t>(pointer), size);
            },
            pyb::arg("name"),
            "(address, size) of the program-scope variable `name` (OpenCL C `global` or `constant` at file scope): "
            "device memory of the module's device for as long as the module lives, which copies and kernel "
            "arguments take as an int address (InvalidArgumentError, INVALID_GLOBAL_NAME, for a name the module "
            "does not export).")
        .def_property_readonly(
            "has_imports", [](const PyModule& m) { return m.module->has_imports(); },
            "True when it imports functions or variables (SPIR-V Import linkage): its kernels and "
            "variables come once Module.link resolved them.")
        .def_static("link", &link_modules, pyb::arg("modules"),
                    "Resolves the imports of every module of `modules` (one device's) against the exports of the "
                    "others (zeModuleDynamicLink). A module is linked once; the importer keeps what it needs of "
                    "the modules it imports from. ModuleBuildError (MODULE_LINK_FAILURE) naming the imports that no "
                    "module, or several, export; UnsupportedError where the device cannot link (CUDA).")
        .def("kernel", &make_kernel, pyb::arg("name"),
             "The kernel `name` (InvalidArgumentError, INVALID_KERNEL_NAME, when there is none; "
             "INVALID_MODULE_UNLINKED before a module with imports is linked).")
        .def("__repr__", [](const PyModule& m) {
            return "<zehal.Module " + std::to_string(m.module->kernel_names().size()) + " kernels on " +
                   std::string(m.device->backend_name()) + ">";
        });

    pyb::class_<PyKernel>(m, "Kernel", "A kernel of a Module; launched by Dma.launch.")
        .def_property_readonly(
            "name", [](const PyKernel& k) { return k.kernel->properties().name; }, "Its name.")
        .def_property_readonly(
            "device", [](const PyKernel& k) { return k.device; }, "The device it runs on.")
        .def_property_readonly(
            "args",
            [](const PyKernel& k) {
                pyb::list out;
                for (const hal::KernelArg& a : k.kernel->properties().args)
                    out.append(pyb::make_tuple(kind_name(a.kind), a.size));
                return out;
            },
            "Its signature: (kind, size) per argument; kind is 'value', 'global', 'constant' or 'local'. "
            "('value', 0) is an argument the backend does not describe (level_zero).")
        .def_property_readonly(
            "required_group_size",
            [](const PyKernel& k) {
                const auto& r = k.kernel->properties().required_group_size;
                return r[0] == 0 ? pyb::object(pyb::none()) : pyb::object(pyb::make_tuple(r[0], r[1], r[2]));
            },
            "reqd_work_group_size, or None.")
        .def_property(
            "group_size",
            [](const PyKernel& k) {
                const auto g = k.kernel->group_size();
                return pyb::make_tuple(g[0], g[1], g[2]);
            },
            [](PyKernel& k, pyb::handle size) {
                const auto g = dims_arg(size, "Kernel.group_size");
                check(k.kernel->set_group_size(g[0], g[1], g[2]), "Kernel.group_size");
            },
            "The work-group size launches use (x, y, z); set it with an int or 1 to 3 ints.")
        .def_property(
            "global_offset",
            [](const PyKernel& k) {
                const auto o = k.kernel->global_offset();
                return pyb::make_tuple(o[0], o[1], o[2]);
            },
            [](PyKernel& k, pyb::handle offset) {
                const auto o = dims_arg(offset, "Kernel.global_offset", 0);
                check(k.kernel->set_global_offset(o[0], o[1], o[2]), "Kernel.global_offset");
            },
            "The global offset launches use (x, y, z): get_global_offset() returns it and "
            "get_global_id() includes it. Set it with an int or 1 to 3 ints (0 for the others).")
        .def(
            "suggest_group_size",
            [](const PyKernel& k, pyb::handle global) {
                std::array<uint32_t, 3> out{};
                check(k.kernel->suggest_group_size(dims_arg(global, "Kernel.suggest_group_size"), &out),
                      "Kernel.suggest_group_size");
                return pyb::make_tuple(out[0], out[1], out[2]);
            },
            pyb::arg("global_size"), "A group size dividing `global_size` (an int or 1 to 3 ints) per dimension.")
        .def("__repr__", [](const PyKernel& k) { return "<zehal.Kernel '" + k.kernel->properties().name + "'>"; });

    pyb::object device = m.attr("Device");
    device.attr("mark_start") = pyb::cpp_function(
        [](const hal::DeviceRef& d, pyb::handle stream, pyb::handle event) {
            mark_stream(d, stream, event, hal::StreamMark::start);
        },
        pyb::name("mark_start"), pyb::is_method(device), pyb::arg("stream"), pyb::arg("event"),
        "Records `event`'s start on `stream`, a stream zehal did not create (an int CUstream, or an object with "
        "__cuda_stream__), in that stream's order; mark_end after the work there makes the event's kernel and "
        "synchronized timestamps bracket it. CUDA only: UnsupportedError elsewhere.");
    device.attr("mark_end") = pyb::cpp_function(
        [](const hal::DeviceRef& d, pyb::handle stream, pyb::handle event) {
            mark_stream(d, stream, event, hal::StreamMark::end);
        },
        pyb::name("mark_end"), pyb::is_method(device), pyb::arg("stream"), pyb::arg("event"),
        "Records `event`'s end on `stream`, then signals it, in that stream's order (see mark_start).");

    pyb::object dma = m.attr("Dma");
    dma.attr("launch_indirect") = pyb::cpp_function(
        &dma_launch_indirect, pyb::name("launch_indirect"), pyb::is_method(dma), pyb::arg("kernel"), pyb::arg("groups"),
        pyb::kw_only(), pyb::arg("args") = pyb::tuple(), pyb::arg("group_size") = pyb::none(),
        pyb::arg("request") = true, pyb::arg("signal") = pyb::none(),
        "Launches `kernel` as launch() does, over the work-group counts read from `groups` when the launch runs "
        "(three uint32: x, y, z, in a zehal Buffer or any memory a pointer argument takes), so a copy into them "
        "queued before is seen; a count of 0 runs no work-item. UnsupportedError on CUDA, whose streams take a "
        "launch's grid when it is queued.");
    dma.attr("launch") = pyb::cpp_function(
        &dma_launch, pyb::name("launch"), pyb::is_method(dma), pyb::sibling(pyb::getattr(dma, "launch", pyb::none())),
        pyb::arg("kernel"), pyb::arg("groups"), pyb::kw_only(), pyb::arg("args") = pyb::tuple(),
        pyb::arg("group_size") = pyb::none(), pyb::arg("request") = true, pyb::arg("signal") = pyb::none(),
        "Launches `kernel` over `groups` work-groups (an int or 1 to 3 ints) with `args` (one per kernel "
        "argument: zehal Buffers, objects with __cuda_array_interface__ or __dlpack__, int addresses or None "
        "for pointers; ints, floats, NumPy scalars or bytes for values; byte counts for local memory) and "
        "returns at once: a Request, or None with request=False. group_size: set on the kernel first. "
        "signal: an Event the launch signals (its kernel timestamps are the kernel's start and end).");
}

}  // namespace zehal::py
