// Devices from Python: backends(), devices(), default_device(), sim_device(), Device.
#include <pybind11/stl.h>

#include <cstdio>
#include <limits>
#include <string>

#include "bindings.hpp"
#include "hal/registry.hpp"
#include "hal/sim/sim_backend.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"

namespace zehal::py {
namespace {

// What zehal.backends() lists for one backend: plain data, also readable as a mapping
// (`b.name` or `b["name"]`).
struct BackendInfo {
    std::string name;
    bool available = false;
    std::string reason;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::BackendInfo)

namespace zehal::py {
namespace {

pyb::object backend_item(const BackendInfo& b, const std::string& key) {
    if (key == "name") return pyb::str(b.name);
    if (key == "available") return pyb::bool_(b.available);
    if (key == "reason") return pyb::str(b.reason);
    throw pyb::key_error(key);
}

std::string uuid_text(const std::array<uint8_t, 16>& u) {
    std::string s;
    char hex[3];
    for (size_t i = 0; i < u.size(); ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10) s += '-';
        std::snprintf(hex, sizeof hex, "%02x", u[i]);
        s += hex;
    }
    return s;
}

// The devices of the default backend, or of `name`; an available-but-missing backend
// (known name, not usable here) has no devices.
std::vector<hal::DeviceRef> devices_of(const std::optional<std::string>& name) {
    std::shared_ptr<hal::Backend> backend;
    if (!name) {
        check(hal::default_backend(&backend), "devices");
        return backend->devices();
    }
    const ze_result_t r = hal::find_backend(*name, &backend);
    if (r == ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE) return {};
    check(r, "devices(backend='" + *name + "')");
    return backend->devices();
}

// The device properties, once: each field's name, its documentation and how to read it.
// The attributes, to_dict(), p[name], DeviceProperties.FIELDS (which the CLI lists) and the
// stubs (checked by a test) all follow this table.
struct PropertyField {
    const char* name;
    const char* doc;
    pyb::object (*get)(const hal::DeviceProperties&);
};

using P = hal::DeviceProperties;
const PropertyField kPropertyFields[] = {
    {"name", "Device name.", [](const P& p) { return pyb::cast(p.name); }},
    {"uuid", "Device UUID as 8-4-4-4-12 hex text.", [](const P& p) { return pyb::cast(uuid_text(p.uuid)); }},
    {"uuid_bytes", "Device UUID as 16 bytes.",
     [](const P& p) { return pyb::object(pyb::bytes(reinterpret_cast<const char*>(p.uuid.data()), 16)); }},
    {"memory_bytes", "Device memory capacity in bytes.", [](const P& p) { return pyb::cast(p.memory_bytes); }},
    {"max_allocation_bytes", "Largest single allocation in bytes.",
     [](const P& p) { return pyb::cast(p.max_allocation_bytes); }},
    {"timer_hz", "Device clock frequency in Hz.", [](const P& p) { return pyb::cast(p.timer_hz); }},
    {"kernel_timestamp_valid_bits", "Valid bits of kernel timestamps (they wrap above).",
     [](const P& p) { return pyb::cast(p.kernel_timestamp_valid_bits); }},
    {"timestamp_valid_bits", "Valid bits of global timestamps and trace ticks.",
     [](const P& p) { return pyb::cast(p.timestamp_valid_bits); }},
    {"compute_engines", "Engines of engine group (ordinal) 0.",
     [](const P& p) { return pyb::cast(p.compute_engines); }},
    {"copy_engines", "Engines of engine group (ordinal) 1.", [](const P& p) { return pyb::cast(p.copy_engines); }},
    {"subdevices", "Number of sub-devices (0: none).", [](const P& p) { return pyb::cast(p.subdevices); }},
    {"memory_ordinals", "Memory ordinals an allocation may name.",
     [](const P& p) { return pyb::cast(p.memory_ordinals); }},
    {"timestamp_flags", "Timestamp capability bits (KERNEL 1, SYNCHRONIZED 2).",
     [](const P& p) { return pyb::cast(p.timestamp_flags); }},
    {"kernel_timestamps", "Events of timestamp pools record kernel timestamps.",
     [](const P& p) { return pyb::cast((p.timestamp_flags & hal::kTimestampKernel) != 0); }},
    {"synchronized_timestamps", "Mapped timestamp pools give timestamps in host ns.",
     [](const P& p) { return pyb::cast((p.timestamp_flags & hal::kTimestampSynchronized) != 0); }},
    {"dma_buf_export", "Metric export memory (dma-buf) is supported.",
     [](const P& p) { return pyb::cast(p.dma_buf_export); }},
    {"tracer", "The device has a hardware trace source (tracer-based metrics).",
     [](const P& p) { return pyb::cast(p.tracer); }},
    {"limits", "What the device lacks and why ('' when nothing), as its backend found it.",
     [](const P& p) { return pyb::cast(p.limits); }},
};

pyb::dict properties_dict(const hal::DeviceProperties& p) {
    pyb::dict d;
    for (const PropertyField& f : kPropertyFields) d[f.name] = f.get(p);
    return d;
}

void bind_properties(pyb::module_& m) {
    auto cls = pyb::class_<P>(m, "DeviceProperties", "What a device is and can do (a snapshot, read-only).");
    pyb::list names;
    for (const PropertyField& f : kPropertyFields) {
        cls.def_property_readonly(
            f.name, [get = f.get](const P& p) { return get(p); }, f.doc);
        names.append(f.name);
    }
    cls.attr("FIELDS") = pyb::tuple(names);
    cls.def("to_dict", &properties_dict, "The properties as a plain dict, in FIELDS order.")
        .def(
            "__getitem__",
            [](const P& p, const std::string& key) -> pyb::object {
                for (const PropertyField& f : kPropertyFields)
                    if (key == f.name) return f.get(p);
                throw pyb::key_error(key);
            },
            pyb::arg("key"), "A property by name, as the attribute of that name (KeyError for others).")
        .def("__repr__",
             [](const P& p) { return "DeviceProperties(" + pyb::repr(properties_dict(p)).cast<std::string>() + ")"; });
}

void bind_backend_info(pyb::module_& m) {
    pyb::class_<BackendInfo>(m, "BackendInfo", "A backend of the registry and whether it is usable here.")
        .def_readonly("name", &BackendInfo::name, "\"level_zero\", \"cuda\" or \"sim\".")
        .def_readonly("available", &BackendInfo::available, "True when the backend loaded and has devices.")
        .def_readonly("reason", &BackendInfo::reason, "Why it is not available (empty when available).")
        .def(
            "devices", [](const BackendInfo& b) { return devices_of(b.name); },
            "The backend's devices (empty when not available).")
        .def("__getitem__", &backend_item, pyb::arg("key"))
        .def("keys", [](const BackendInfo&) { return pyb::make_tuple("name", "available", "reason"); })
        // Equal to another BackendInfo with the same fields, or to its name as a str (so
        // `"cuda" in zehal.backends()` answers); any other type is not comparable.
        .def("__eq__",
             [](const BackendInfo& a, pyb::object b) -> pyb::object {
                 if (pyb::isinstance<pyb::str>(b)) return pyb::bool_(a.name == b.cast<std::string>());
                 const BackendInfo* other = instance_of<BackendInfo>(b.ptr());
                 if (!other) return pyb::reinterpret_borrow<pyb::object>(Py_NotImplemented);
                 const BackendInfo& o = *other;
                 return pyb::bool_(a.name == o.name && a.available == o.available && a.reason == o.reason);
             })
        .def("__hash__", [](const BackendInfo& b) { return pyb::hash(pyb::str(b.name)); })
        .def("__repr__", [](const BackendInfo& b) {
            return "BackendInfo(name=" + pyb::repr(pyb::str(b.name)).cast<std::string>() +
                   ", available=" + (b.available ? "True" : "False") +
                   ", reason=" + pyb::repr(pyb::str(b.reason)).cast<std::string>() + ")";
        });
}

void bind_device_class(pyb::module_& m) {
    using hal::Device;
    pyb::class_<Device, hal::DeviceRef>(m, "Device",
                                        "A device of some backend. Devices are shared: the same device is the "
                                        "same object, equal and hashed by identity.")
        .def_property_readonly(
            "name", [](const Device& d) { return d.properties().name; }, "Device name.")
        .def_property_readonly(
            "backend", [](const Device& d) { return std::string(d.backend_name()); },
            "Name of the backend (\"sim\", \"cuda\", \"level_zero\").")
        .def_property_readonly(
            "properties", [](const Device& d) { return d.properties(); }, "DeviceProperties of the device.")
        .def(
            "global_timestamps",
            [](Device& d) {
                uint64_t host_ns = 0, ticks = 0;
                ze_result_t r;
                r = without_gil([&] { return d.global_timestamps(&host_ns, &ticks); });
                check(r, "Device.global_timestamps");
                return pyb::make_tuple(host_ns, ticks);
            },
            "(host ns of CLOCK_MONOTONIC_RAW, device ticks), sampled together.")
        .def(
            "metric_groups", [](const hal::DeviceRef& d) { return device_metric_groups(d); },
            "The device's metric groups (a list of MetricGroup).")
        .def(
            "can_access_peer",
            [](const Device& d, const hal::DeviceRef& peer) {
                if (!peer) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "Device.can_access_peer: peer is None");
                return d.can_access_peer(*peer);
            },
            pyb::arg("peer"),
            "True when this device's engines and kernels touch `peer`'s device memory directly "
            "(zeDeviceCanAccessPeer). Copies between two devices of one backend run either way "
            "(staged where there is no access).")
        .def(
            "peer_properties",
            [](const Device& d, const hal::DeviceRef& peer) {
                if (!peer) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "Device.peer_properties: peer is None");
                hal::PeerProperties p;
                check(d.peer_properties(*peer, &p), "Device.peer_properties");
                pyb::dict out;
                out["access"] = p.access;
                out["atomics"] = p.atomics;
                out["bandwidth_bytes_per_s"] = p.bandwidth_bytes_per_s;
                return out;
            },
            pyb::arg("peer"),
            "How this device reaches `peer`'s memory: {'access', 'atomics', 'bandwidth_bytes_per_s' (0: "
            "unknown or unthrottled)} (zeDeviceGetP2PProperties).")
        .def(
            "lose", [](Device& d) { check(d.lose(), "Device.lose"); },
            "Sim only: the device is lost; every later call raises DeviceLostError. "
            "Other backends raise UnsupportedError.")
        .def("__eq__", [](const Device& a, pyb::object b) { return &a == instance_of<Device>(b.ptr()); })
        .def("__hash__", [](const Device& d) { return std::hash<const void*>{}(&d); })
        .def("__repr__", [](const Device& d) {
            return "<zehal.Device " + std::string(d.backend_name()) + " " +
                   pyb::repr(pyb::str(d.properties().name)).cast<std::string>() + ">";
        });
}

}  // namespace

hal::DeviceRef device_or_default(const hal::DeviceRef& device) {
    if (device) return device;
    hal::DeviceRef d;
    if (ze_result_t r = hal::default_device(&d); r != ZE_RESULT_SUCCESS) {
        // Say why each backend that could have given it is missing (a bad ZEHAL_SIM_* value...).
        std::string why;
        for (const hal::BackendStatus& b : hal::backends())
            if (!b.available) why += "; " + b.name + ": " + b.reason;
        check(r, "default device" + why);
    }
    return d;
}

void bind_device(pyb::module_& m) {
    bind_properties(m);
    bind_backend_info(m);
    bind_device_class(m);

    m.def(
        "backends",
        [] {
            std::vector<BackendInfo> out;
            for (const hal::BackendStatus& b : hal::backends()) out.push_back({b.name, b.available, b.reason});
            return out;
        },
        "Every known backend in registry order (level_zero, cuda, sim), with why one is unavailable.");
    m.def("devices", &devices_of, pyb::arg("backend") = pyb::none(),
          "Devices of `backend`, or of the default backend (ZEHAL_BACKEND, else the first available one "
          "with a device) when None. A known backend that is not available here has none; an unknown "
          "name raises InvalidArgumentError.");
    m.def(
        "default_device", [] { return device_or_default(nullptr); }, "First device of the default backend.");
    m.def(
        "sim_device",
        [](pyb::handle copy_engines, pyb::handle memory_bytes, pyb::handle timer_hz,
           pyb::handle kernel_timestamp_valid_bits, pyb::handle timestamp_valid_bits, pyb::handle start_ticks,
           pyb::handle subdevices, pyb::handle trace_buffer_bytes, pyb::handle bandwidth_bytes_per_s,
           pyb::handle fail_allocation_after, pyb::handle compute_engines, pyb::handle async_records_per_s,
           pyb::handle async_burst_records, pyb::handle link_bandwidth_bytes_per_s) {
            sim::SimConfig c;
            c.copy_engines = int_arg<uint32_t>(copy_engines, "copy_engines");
            c.memory_bytes = int_arg<uint64_t>(memory_bytes, "memory_bytes");
            c.timer_hz = int_arg<uint64_t>(timer_hz, "timer_hz");
            c.kernel_timestamp_valid_bits = int_arg<uint32_t>(kernel_timestamp_valid_bits,
                                                              "kernel_timestamp_valid_bits");
            c.timestamp_valid_bits = int_arg<uint32_t>(timestamp_valid_bits, "timestamp_valid_bits");
            c.start_ticks = int_arg<uint64_t>(start_ticks, "start_ticks");
            c.subdevices = int_arg<uint32_t>(subdevices, "subdevices");
            c.trace_buffer_bytes = int_arg<size_t>(trace_buffer_bytes, "trace_buffer_bytes");
            c.bandwidth_bytes_per_s = int_arg<uint64_t>(bandwidth_bytes_per_s, "bandwidth_bytes_per_s");
            if (!fail_allocation_after.is_none())
                c.fail_allocation_after = int_arg<uint64_t>(fail_allocation_after, "fail_allocation_after");
            c.compute_engines = int_arg<uint32_t>(compute_engines, "compute_engines");
            c.async_records_per_s = int_arg<uint64_t>(async_records_per_s, "async_records_per_s");
            c.async_burst_records = int_arg<uint64_t>(async_burst_records, "async_burst_records");
            c.link_bandwidth_bytes_per_s = int_arg<uint64_t>(link_bandwidth_bytes_per_s, "link_bandwidth_bytes_per_s");
            hal::DeviceRef d;
            if (const std::string problem = c.problem(); !problem.empty())
                check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "sim_device: " + problem);
            check(sim::create_device(c, &d), "sim_device");
            return d;
        },
        pyb::arg("copy_engines") = sim::SimConfig{}.copy_engines,
        pyb::arg("memory_bytes") = sim::SimConfig{}.memory_bytes, pyb::arg("timer_hz") = sim::SimConfig{}.timer_hz,
        pyb::arg("kernel_timestamp_valid_bits") = sim::SimConfig{}.kernel_timestamp_valid_bits,
        pyb::arg("timestamp_valid_bits") = sim::SimConfig{}.timestamp_valid_bits,
        pyb::arg("start_ticks") = sim::SimConfig{}.start_ticks, pyb::arg("subdevices") = sim::SimConfig{}.subdevices,
        pyb::arg("trace_buffer_bytes") = sim::SimConfig{}.trace_buffer_bytes,
        pyb::arg("bandwidth_bytes_per_s") = sim::SimConfig{}.bandwidth_bytes_per_s,
        pyb::arg("fail_allocation_after") = pyb::none(), pyb::arg("compute_engines") = sim::SimConfig{}.compute_engines,
        pyb::arg("async_records_per_s") = sim::SimConfig{}.async_records_per_s,
        pyb::arg("async_burst_records") = sim::SimConfig{}.async_burst_records,
        pyb::arg("link_bandwidth_bytes_per_s") = sim::SimConfig{}.link_bandwidth_bytes_per_s,
        "A fresh software device with this configuration (it shares the sim backend's host memory; every "
        "sim device is a peer of the others, its copies touching their memory throttled at "
        "link_bandwidth_bytes_per_s, 0 for none). "
        "Values out of range raise InvalidArgumentError; fail_allocation_after=N makes every "
        "allocation after the first N fail with OutOfMemoryError.");
}

}  // namespace zehal::py
