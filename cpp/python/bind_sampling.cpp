// MetricStreamer from Python: the sampled counters of a time-based group, read as NumPy
// structured arrays laid over the counter reports themselves (one copy, out of the ring).
#include <pybind11/numpy.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "hal/metric_info.hpp"
#include "metrics/counter_report.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/streamer.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/metric_objects.hpp"

namespace zehal::py {
namespace {

// The NumPy format of a metric value of result type `type`, as a counter report holds it
// (little endian, in the low bytes of its 8-byte word).
const char* value_format(uint32_t type) {
    switch (type) {
        case hal::kUint32:
            return "<u4";
        case hal::kFp32:
            return "<f4";
        case hal::kFp64:
            return "<f8";
        case hal::kBool8:
            return "?";
        default:
            return "<u8";
    }
}

// The dtype of one counter report of `group`: `begin` and `end` (device ticks of the window),
// then one field per metric named as the metric, typed by its result type, at the report's
// own offsets (itemsize: the whole report), so reports read from the ring need no unpacking.
pyb::dtype report_dtype(const metrics::MetricGroup& group) {
    pyb::list names, formats, offsets;
    names.append("begin");
    formats.append("<u8");
    offsets.append(offsetof(metrics::CounterReportHeader, begin_ticks));
    names.append("end");
    formats.append("<u8");
    offsets.append(offsetof(metrics::CounterReportHeader, end_ticks));
    for (size_t k = 0; k < group.metrics().size(); ++k) {
        names.append(group.metrics()[k].info().name);
        formats.append(value_format(group.metrics()[k].info().result_type));
        offsets.append(sizeof(metrics::CounterReportHeader) + k * sizeof(uint64_t));
    }
    pyb::dict spec;
    spec["names"] = names;
    spec["formats"] = formats;
    spec["offsets"] = offsets;
    spec["itemsize"] = metrics::report_size(group);
    return pyb::dtype::from_args(spec);
}

// The group a Python `group` argument names: None → InvalidArgumentError
// (INVALID_NULL_HANDLE), anything but a MetricGroup → TypeError.
metrics::MetricGroupRef group_arg(pyb::handle group, std::string_view what) {
    if (group.is_none()) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": group is None");
    const PyMetricGroup* g = instance_of<PyMetricGroup>(group.ptr());
    if (!g) throw pyb::type_error(std::string(what) + ": group must be a MetricGroup (initialized)");
    return g->group;
}

// What a notification event must be, for the messages.
constexpr const char* kNotHostVisible = "notification not an event of a host-visible pool";

// A streamer as Python holds it. close() stops and frees it; every other call afterwards
// raises InvalidArgumentError (ZE_RESULT_ERROR_INVALID_NULL_HANDLE).
class PyStreamer {
public:
    PyStreamer(const hal::DeviceRef& device, pyb::handle group, pyb::handle period_ns,
               pyb::handle notify_every_n_reports, const hal::EventRef& notification)
        : device_(device_or_default(device)),
          group_(group_arg(group, "MetricStreamer")),
          dtype_(report_dtype(*group_)) {
        period_ns_ = int_arg<uint32_t>(period_ns, "MetricStreamer: period_ns");
        notify_ = int_arg<uint32_t>(notify_every_n_reports, "MetricStreamer: notify_every_n_reports");
        std::shared_ptr<metrics::Streamer> s;
        // Without the GIL: the first streamer of a CUDA device configures its sampling.
        const ze_result_t r = without_gil(
            [&] { return metrics::Streamer::open(device_, group_.get(), &period_ns_, &notify_, notification, &s); });
        if (r != ZE_RESULT_SUCCESS) check(r, "MetricStreamer" + why_not(r, notification));
        streamer_ = std::move(s);
    }

    // Why Streamer::open answered `r`, for the message.
    std::string why_not(ze_result_t r, const hal::EventRef& notification) const {
        const std::string on = " on " + device_->properties().name;
        const std::string name = "group '" + group_->info().name + "'";
        switch (r) {
            case ZE_RESULT_NOT_READY:
                return ": " + name + " is not activated" + on + " (zehal.activate_metric_groups first)";
            case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE:
                return ": a streamer is already open" + on;
            case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE:
                return ": the sampled counters of " + device_->properties().name + " cannot be read";
            case ZE_RESULT_ERROR_DEPENDENCY_UNAVAILABLE:
                return ": another process or a profiler samples the counters" + on;
            case ZE_RESULT_ERROR_INVALID_ARGUMENT:
                if (!group_->samples(hal::kSamplingTimeBased)) return ": " + name + " is not time-based";
                if (notification) return ": " + name + " of another device, or " + kNotHostVisible + on;
                return ": " + name + " is a group of another device";
            default:
                return {};
        }
    }

    pyb::array read(pyb::handle max_reports) {
        // max_reports is converted first: its __index__ may close the streamer.
        const uint32_t asked = max_reports.is_none()
                                   ? std::numeric_limits<uint32_t>::max()
                                   : int_arg<uint32_t>(max_reports, "MetricStreamer.read: max_reports",
                                                       ZE_RESULT_ERROR_INVALID_SIZE);
        // A reference of our own: a close() from another thread while the GIL is released
        // must not free the streamer under this call.
        const std::shared_ptr<metrics::Streamer> keep = live_ref("MetricStreamer.read");
        // The reports are copied once, out of the ring into memory the array then owns (not
        // Python's allocator: a daemon thread still reading at interpreter exit must not
        // write into memory that finalization frees). Both calls take the streamer's lock,
        // which its sampler holds while a CUDA window is decoded: without the GIL.
        size_t size = 0;
        ze_result_t r = without_gil([&] { return keep->read(asked, &size, nullptr); });
        if (r != ZE_RESULT_WARNING_DROPPED_DATA) check(r, "MetricStreamer.read");
        auto reports = std::make_unique<std::vector<uint8_t>>(size);
        if (size) {
            r = without_gil([&] { return keep->read(asked, &size, reports->data()); });
            if (r != ZE_RESULT_WARNING_DROPPED_DATA) check(r, "MetricStreamer.read");
        }
        const auto count = static_cast<pyb::ssize_t>(size / keep->report_size());
        uint8_t* data = reports->data();
        pyb::capsule owner(reports.get(), [](void* p) { delete static_cast<std::vector<uint8_t>*>(p); });
        reports.release();
        return pyb::array(dtype_, {count}, {static_cast<pyb::ssize_t>(keep->report_size())}, data, owner);
    }

    uint64_t dropped() { return live_ref("MetricStreamer.dropped")->dropped(); }
    uint32_t period_ns() {
        live_ref("MetricStreamer.period_ns");
        return period_ns_;
    }
    uint32_t notify_every_n_reports() {
        live_ref("MetricStreamer.notify_every_n_reports");
        return notify_;
    }
    PyMetricGroup group() const { return {group_}; }
    const hal::DeviceRef& device() const { return device_; }
    const pyb::dtype& dtype() const { return dtype_; }
    bool closed() const { return !streamer_; }

    // Stops sampling and frees the device's streamer slot; idempotent. Waits for the sampler
    // thread (and the commands writing marker slots) without the GIL.
    void close() {
        if (!streamer_) return;
        std::shared_ptr<metrics::Streamer> keep = streamer_;
        ze_result_t r = without_gil([&] { return keep->close(); });
        // Another thread closed (or is closing) it while the GIL was released: closed all the same.
        if (r == ZE_RESULT_ERROR_INVALID_NULL_HANDLE) r = ZE_RESULT_SUCCESS;
        if (streamer_ == keep) streamer_.reset();
        without_gil([&] { keep.reset(); });  // frees the ring without the GIL (when the last reference)
        check(r, "MetricStreamer.close");
    }

private:
    // The streamer, held by the caller for a call made without the GIL.
    std::shared_ptr<metrics::Streamer> live_ref(std::string_view what) {
        if (!streamer_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the streamer is closed");
        return streamer_;
    }

    hal::DeviceRef device_;
    metrics::MetricGroupRef group_;
    pyb::dtype dtype_;
    uint32_t period_ns_ = 0;
    uint32_t notify_ = 0;
    std::shared_ptr<metrics::Streamer> streamer_;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyStreamer)

namespace zehal::py {

void bind_sampling(pyb::module_& m) {
    pyb::class_<PyStreamer>(m, "MetricStreamer",
                            "Samples a time-based metric group of a device: a native thread writes one counter "
                            "report per period of device time into a ring that read() empties. One per device. "
                            "A context manager: leaving the block closes it.")
        .def(pyb::init<const hal::DeviceRef&, pyb::handle, pyb::handle, pyb::handle, const hal::EventRef&>(),
             pyb::arg("device"), pyb::arg("group"), pyb::arg("period_ns") = 0, pyb::arg("notify_every_n_reports") = 0,
             pyb::arg("notification") = pyb::none(),
             "device: a Device (None: the default device); group: an activated time-based MetricGroup; "
             "period_ns: the sampling period (below 10 us raised to it, 0: 1 ms); notify_every_n_reports: when "
             "`notification` (an Event of a host-visible pool) is signalled (0: 1, clamped to the ring). "
             "NotReadyError for a group not activated, InvalidArgumentError for one that is not time-based, "
             "ObjectInUseError when the device has a streamer, UnsupportedError for a device whose counters "
             "cannot be read.")
        .def("read", &PyStreamer::read, pyb::arg("max_reports") = pyb::none(),
             "The reports written since the last read, at most max_reports (None: all), oldest first, as a "
             "NumPy structured array of `dtype`, without the GIL. Reports lost to a full ring show in "
             "`dropped`.")
        .def_property_readonly("dtype", &PyStreamer::dtype,
                               "The dtype of a report: begin and end (uint64 device ticks of the window), then "
                               "one field per metric of the group, named as the metric, typed by its result type.")
        .def_property_readonly("dropped", &PyStreamer::dropped, "Reports lost to a full ring since the open.")
        .def_property_readonly("period_ns", &PyStreamer::period_ns, "The sampling period in use.")
        .def_property_readonly("notify_every_n_reports", &PyStreamer::notify_every_n_reports, "The value in use.")
        .def_property_readonly("group", &PyStreamer::group, "The group sampled.")
        .def_property_readonly("device", &PyStreamer::device, "The device sampled.")
        .def_property_readonly("closed", &PyStreamer::closed, "True after close().")
        .def("close", &PyStreamer::close, "Stops sampling; reports not read are lost. Idempotent.")
        .def("__enter__", &enter<PyStreamer>)
        .def("__exit__", [](PyStreamer& s, pyb::args) { s.close(); })
        .def("__repr__", [](const PyStreamer& s) {
            return std::string("<zehal.MetricStreamer") + (s.closed() ? " closed>" : ">");
        });
}

}  // namespace zehal::py
