// Event pools and events from Python, with kernel and synchronized timestamps as NumPy
// structured arrays built over memory the array owns (no copy).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "bindings.hpp"
#include "common/clock.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/interruptible_wait.hpp"

namespace zehal::py {
namespace {

// A pool as Python holds it: close() drops the pool, while events already taken keep it
// alive (an event owns its pool). Calls after close raise InvalidArgumentError
// (ZE_RESULT_ERROR_INVALID_NULL_HANDLE).
class PyEventPool {
public:
    PyEventPool(const hal::DeviceRef& device, pyb::handle count, const std::optional<std::string>& timestamps,
                bool host_visible)
        : device_(device_or_default(device)) {
        uint32_t flags = host_visible ? hal::kPoolHostVisible : 0u;
        if (timestamps) {
            if (*timestamps == "kernel")
                flags |= hal::kPoolKernelTimestamp;
            else if (*timestamps == "mapped")
                flags |= hal::kPoolKernelMappedTimestamp;
            else
                check(ZE_RESULT_ERROR_INVALID_ENUMERATION,
                      "EventPool: timestamps must be None, 'kernel' or 'mapped', not '" + *timestamps + "'");
        }
        const uint32_t n = int_arg<uint32_t>(count, "EventPool: count", ZE_RESULT_ERROR_INVALID_SIZE);
        std::shared_ptr<hal::EventPool> pool;
        check(device_->create_event_pool(n, flags, &pool), "EventPool");
        pool_ = std::move(pool);
        timestamps_ = timestamps;
    }

    hal::EventRef event(pyb::handle index) {
        // The index first: its __index__ may close the pool.
        const uint32_t i = int_arg<uint32_t>(index, "EventPool.event: index");
        hal::EventRef e;
        check(live("EventPool.event").event(i, &e), "EventPool.event");
        return e;
    }
    uint32_t count() { return live("EventPool.count").count(); }
    uint32_t flags() { return live("EventPool.flags").flags(); }
    const std::optional<std::string>& timestamps() const { return timestamps_; }
    const hal::DeviceRef& device() const { return device_; }
    bool closed() const { return !pool_; }
    void close() { pool_.reset(); }

private:
    hal::EventPool& live(std::string_view what) {
        if (!pool_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the pool is closed");
        return *pool_;
    }

    hal::DeviceRef device_;
    std::shared_ptr<hal::EventPool> pool_;
    std::optional<std::string> timestamps_;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyEventPool)

namespace zehal::py {
namespace {

// Waits until `e` is signalled or `seconds` passed (interruptible, without the GIL).
void synchronize(hal::Event& e, const std::optional<double>& seconds) {
    const ze_result_t r = interruptible_wait(seconds, "Event.synchronize",
                                             [&](uint64_t slice) { return e.host_synchronize(slice); });
    check(r, r == ZE_RESULT_NOT_READY ? "Event.synchronize: timed out" : "Event.synchronize");
}

// The dtype of KernelTimestampResult: four little-endian uint64 fields, 32 bytes.
pyb::dtype timestamp_dtype() {
    static_assert(sizeof(hal::KernelTimestampResult) == 32, "four uint64 fields");
    pyb::list fields;
    for (const char* name : {"global_start", "global_end", "context_start", "context_end"})
        fields.append(pyb::make_tuple(name, "<u8"));
    return pyb::dtype::from_args(fields);
}

using QueryFn = ze_result_t (hal::Event::*)(uint32_t*, hal::KernelTimestampResult*);

// Runs a timestamp query (count semantics of contract §3) and returns its packets as a
// structured array viewing memory owned by a capsule (the array's base).
pyb::array query_timestamps(hal::Event& e, QueryFn fn, const std::optional<uint32_t>& want, std::string_view what) {
    uint32_t packets = 0;
    ze_result_t r;
    r = without_gil([&] { return (e.*fn)(&packets, nullptr); });
    check(r, what);
    // count 0, like None, asks for every packet (the native query's count 0 → all).
    uint32_t n = want && *want ? std::min(*want, packets) : packets;
    auto results = std::make_unique<hal::KernelTimestampResult[]>(n ? n : 1);
    if (n) {
        r = without_gil([&] { return (e.*fn)(&n, results.get()); });
        check(r, what);
    }
    pyb::capsule owner(results.get(), [](void* p) { delete[] static_cast<hal::KernelTimestampResult*>(p); });
    hal::KernelTimestampResult* data = results.release();
    return pyb::array(timestamp_dtype(), {static_cast<pyb::ssize_t>(n)}, {static_cast<pyb::ssize_t>(sizeof *data)},
                      data, owner);
}

std::optional<uint32_t> count_arg(pyb::handle count, std::string_view what) {
    if (count.is_none()) return std::nullopt;
    return int_arg<uint32_t>(count, what, ZE_RESULT_ERROR_INVALID_SIZE);
}

void bind_pool(pyb::module_& m) {
    pyb::class_<PyEventPool>(m, "EventPool",
                             "A pool of events, host-visible unless host_visible=False (such events cannot be a "
                             "MetricTracer's notification). timestamps='kernel' makes commands that signal its "
                             "events record kernel timestamps (device ticks); 'mapped' also gives synchronized "
                             "timestamps (host ns).")
        .def(pyb::init<const hal::DeviceRef&, pyb::handle, const std::optional<std::string>&, bool>(),
             pyb::arg("device") = pyb::none(), pyb::arg("count") = 1, pyb::kw_only(),
             pyb::arg("timestamps") = pyb::none(), pyb::arg("host_visible") = true)
        .def("event", &PyEventPool::event, pyb::arg("index"),
             "Event `index` (< count, else InvalidArgumentError); it keeps the pool alive.")
        .def("__getitem__", &PyEventPool::event, pyb::arg("index"))
        .def("__len__", &PyEventPool::count)
        .def_property_readonly("count", &PyEventPool::count, "Number of events.")
        .def_property_readonly("flags", &PyEventPool::flags,
                               "Event pool flag bits (HOST_VISIBLE 1, IPC 2, "
                               "KERNEL_TIMESTAMP 4, KERNEL_MAPPED_TIMESTAMP 8).")
        .def_property_readonly("timestamps", &PyEventPool::timestamps, "None, 'kernel' or 'mapped'.")
        .def_property_readonly("device", &PyEventPool::device, "The device of the pool.")
        .def_property_readonly("closed", &PyEventPool::closed, "True after close().")
        .def("close", &PyEventPool::close, "Drops the pool; events taken from it stay usable. Idempotent.")
        .def("__enter__", &enter<PyEventPool>)
        .def("__exit__", [](PyEventPool& p, pyb::args) { p.close(); })
        .def("__repr__", [](PyEventPool& p) {
            if (p.closed()) return std::string("<zehal.EventPool closed>");
            return "<zehal.EventPool count=" + std::to_string(p.count()) +
                   " timestamps=" + (p.timestamps() ? "'" + *p.timestamps() + "'" : std::string("None")) + ">";
        });
}

void bind_event(pyb::module_& m) {
    using hal::Event;
    pyb::class_<Event, hal::EventRef>(m, "Event",
                                      "An event of an EventPool: signalled by a command (Dma.copy(signal=...)) or "
                                      "by the host. Thread-safe.")
        .def(
            "query",
            [](Event& e) {
                ze_result_t r = e.query();
                if (r == ZE_RESULT_NOT_READY) return false;
                check(r, "Event.query");
                return true;
            },
            "True once signalled, False before.")
        .def("synchronize", &synchronize, pyb::arg("timeout") = pyb::none(),
             "Waits until signalled, without the GIL. timeout: seconds (None: forever; 0: a query). "
             "Raises NotReadyError when it times out, DeviceLostError if the device was lost.")
        .def(
            "signal", [](Event& e) { check(e.host_signal(), "Event.signal"); },
            "Signals the event from the host, waking waiters.")
        .def(
            "reset", [](Event& e) { check(e.host_reset(), "Event.reset"); },
            "Back to not signalled; recorded timestamps are cleared.")
        .def(
            "kernel_timestamps",
            [](Event& e, pyb::handle count) {
                return query_timestamps(e, &Event::query_kernel_timestamps,
                                        count_arg(count, "Event.kernel_timestamps: count"), "Event.kernel_timestamps");
            },
            pyb::arg("count") = pyb::none(),
            "Kernel timestamps in device ticks, one row per packet (an engine or sub-device that took "
            "part): a NumPy structured array with uint64 fields global_start, global_end, context_start, "
            "context_end. count: at most this many packets (None or 0: all; more than recorded: all). NotReadyError "
            "before the event "
            "is signalled; UnsupportedError for a pool without timestamps.")
        .def(
            "synchronized_timestamps",
            [](Event& e, pyb::handle count) {
                return query_timestamps(e, &Event::query_synchronized_timestamps,
                                        count_arg(count, "Event.synchronized_timestamps: count"),
                                        "Event.synchronized_timestamps");
            },
            pyb::arg("count") = pyb::none(),
            "Kernel timestamps in host ns of CLOCK_MONOTONIC_RAW (pools with timestamps='mapped'); the "
            "same array layout as kernel_timestamps().")
        .def_property_readonly(
            "packets",
            [](Event& e) {
                uint32_t n = 0;
                check(e.query_kernel_timestamps(&n, nullptr), "Event.packets");
                return n;
            },
            "Number of timestamp packets recorded (NotReadyError before the event is signalled).")
        .def_property_readonly(
            "timestamps",
            [](Event& e) -> std::optional<std::string> {
                const uint32_t f = e.pool().flags();
                if (f & hal::kPoolKernelMappedTimestamp) return "mapped";
                if (f & hal::kPoolKernelTimestamp) return "kernel";
                return std::nullopt;
            },
            "None, 'kernel' or 'mapped': what the event's pool records.")
        .def("__repr__", [](Event& e) {
            return std::string("<zehal.Event ") + (e.query() == ZE_RESULT_SUCCESS ? "signalled" : "not signalled") +
                   ">";
        });

    m.attr("TIMESTAMP_DTYPE") = timestamp_dtype();
}

}  // namespace

void bind_events(pyb::module_& m) {
    bind_pool(m);
    bind_event(m);
}

}  // namespace zehal::py
