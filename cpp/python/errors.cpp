// zehal.Error and its subclasses, and the translation of ze_result_t / AML codes into them.
#include <cstdio>
#include <exception>
#include <string>
#include <string_view>

#include "bindings.hpp"
#include "common/status.hpp"
#include "aml/utils/error.h"

namespace zehal::py {
namespace {

// The classes (python/zehal/_errors.py), looked up once by bind_errors and kept for the
// life of the process (the module is never unloaded), so check() can raise without a lookup.
struct ErrorClasses {
    PyObject* error = nullptr;
    PyObject* out_of_memory = nullptr;
    PyObject* invalid_argument = nullptr;
    PyObject* unsupported = nullptr;
    PyObject* not_ready = nullptr;
    PyObject* object_in_use = nullptr;
    PyObject* device_lost = nullptr;
    PyObject* module_build = nullptr;
};
ErrorClasses classes;

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// The class a result raises, by its Level Zero name.
PyObject* class_for(ze_result_t r) {
    const std::string_view name = result_name(r);
    switch (r) {
        case ZE_RESULT_NOT_READY:
            return classes.not_ready;
        case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
            return classes.object_in_use;
        case ZE_RESULT_ERROR_DEVICE_LOST:
            return classes.device_lost;
        case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE:
        case ZE_RESULT_ERROR_MODULE_LINK_FAILURE:
            return classes.module_build;
        case ZE_RESULT_ERROR_OVERLAPPING_REGIONS:
            return classes.invalid_argument;
        default:
            break;
    }
    if (starts_with(name, "ZE_RESULT_ERROR_INVALID_")) return classes.invalid_argument;
    if (starts_with(name, "ZE_RESULT_ERROR_UNSUPPORTED_")) return classes.unsupported;
    if (starts_with(name, "ZE_RESULT_ERROR_OUT_OF_")) return classes.out_of_memory;
    return classes.error;
}

[[noreturn]] void raise(ze_result_t r, int aml_code, std::string_view what) {
    const std::string name(result_name(r));
    char code[16];
    std::snprintf(code, sizeof code, "0x%08x", static_cast<unsigned>(r));
    std::string message;
    if (!what.empty()) message.append(what).append(": ");
    message.append(name).append(" (").append(code).append(")");
    pyb::handle cls = class_for(r);
    pyb::object exc = cls(static_cast<uint32_t>(r), name, aml_code, message);
    PyErr_SetObject(cls.ptr(), exc.ptr());
    throw pyb::error_already_set();
}

// A representative ze_result_t for a positive AML code, so an AML failure raises the same
// class as the HAL failure it usually comes from.
ze_result_t result_for_aml(int aml) {
    switch (aml) {
        case AML_ENOMEM:
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        case AML_EINVAL:
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        case AML_EDOM:
            return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
        case AML_ENOTSUP:
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        case AML_EBUSY:
            return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
        case AML_EPERM:
            return ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS;
        default:
            return ZE_RESULT_ERROR_UNKNOWN;
    }
}

}  // namespace

void bind_errors(pyb::module_& m) {
    // Imported while the zehal package itself is loading this module: a submodule of a
    // package being initialised imports fine.
    pyb::module_ errors = pyb::module_::import("zehal._errors");
    const auto take = [&](const char* name) {
        pyb::object cls = errors.attr(name);
        m.attr(name) = cls;
        return cls.release().ptr();
    };
    classes.error = take("Error");
    classes.out_of_memory = take("OutOfMemoryError");
    classes.invalid_argument = take("InvalidArgumentError");
    classes.unsupported = take("UnsupportedError");
    classes.not_ready = take("NotReadyError");
    classes.object_in_use = take("ObjectInUseError");
    classes.device_lost = take("DeviceLostError");
    classes.module_build = take("ModuleBuildError");

    // pybind11 raises reference_cast_error for None where an argument is taken by
    // reference, and a cast_error of its own words where an instance made by
    // Cls.__new__(Cls) without __init__ is taken by its shared_ptr holder (made_caster.hpp
    // refuses it everywhere else). Both are a wrong type, as Python says it; other
    // cast_errors stay as pybind11 raises them.
    pyb::register_exception_translator([](std::exception_ptr p) {
        static constexpr std::string_view kNotHeld = "Unable to cast from non-held to held instance";
        static constexpr const char* kMessage =
            "zehal: an object of a zehal class is needed; this one is None, or was made by __new__ without "
            "__init__ (the object was not initialized)";
        try {
            if (p) std::rethrow_exception(p);
        } catch (const pyb::reference_cast_error&) {
            PyErr_SetString(PyExc_TypeError, kMessage);
        } catch (const pyb::cast_error& e) {
            if (!std::string_view(e.what()).starts_with(kNotHeld)) throw;
            PyErr_SetString(PyExc_TypeError, kMessage);
        }
    });

    m.def(
        "result_name", [](uint32_t code) { return std::string(result_name(static_cast<ze_result_t>(code))); },
        pyb::arg("code"), "The Level Zero name of a ze_result_t value.");
    m.def(
        "aml_errno_from_ze_result",
        [](uint32_t code) { return aml_errno_from_ze_result(static_cast<ze_result_t>(code)); }, pyb::arg("code"),
        "The positive AML error code a ze_result_t value translates to.");
    m.def(
        "_raise_result", [](uint32_t code, std::string_view what) { check(static_cast<ze_result_t>(code), what); },
        pyb::arg("code"), pyb::arg("what") = "", "Raises what a call failing with `code` raises (tests).");
    m.def(
        "_raise_aml", [](int code, std::string_view what) { check_aml(code, what); }, pyb::arg("code"),
        pyb::arg("what") = "", "Raises what an AML call returning `code` raises (tests).");
}

void check(ze_result_t r, std::string_view what) {
    if (r == ZE_RESULT_SUCCESS) return;
    raise(r, aml_errno_from_ze_result(r), what);
}

void check_aml(int aml_code, std::string_view what) {
    if (aml_code >= 0) return;
    const int aml = -aml_code;
    raise(result_for_aml(aml), aml, what);
}

}  // namespace zehal::py
