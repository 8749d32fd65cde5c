// MetricTracer and MetricDecoder from Python, with decoded entries as a NumPy structured
// array the decoder writes into.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "bindings.hpp"
#include "hal/trace_record.hpp"
#include "metrics/decoder.hpp"
#include "metrics/metric_export.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/rank_stream.hpp"
#include "metrics/tracer.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"
#include "python/metric_objects.hpp"

namespace zehal::py {
namespace {

pyb::dtype entry_dtype() {
    // Never destroyed: a static Python object must not be released after the interpreter.
    static const pyb::dtype* dt = new pyb::dtype([] {
        pyb::dict spec;
        spec["names"] = pyb::make_tuple("value", "timestamp", "metric_index", "on_subdevice", "subdevice_id");
        spec["formats"] = pyb::make_tuple("<u8", "<u8", "<u4", "?", "<u4");
        spec["offsets"] = pyb::make_tuple(
            offsetof(metrics::MetricEntry, value), offsetof(metrics::MetricEntry, timestamp),
            offsetof(metrics::MetricEntry, metric_index), offsetof(metrics::MetricEntry, on_subdevice),
            offsetof(metrics::MetricEntry, subdevice_id));
        spec["itemsize"] = sizeof(metrics::MetricEntry);
        return pyb::dtype::from_args(spec);
    }());
    return *dt;
}

pyb::dtype record_dtype() {
    // Never destroyed: a static Python object must not be released after the interpreter.
    static const pyb::dtype* dt = new pyb::dtype([] {
        pyb::dict spec;
        spec["names"] = pyb::make_tuple("kind", "size", "metric", "ticks", "value", "subdevice", "sequence");
        spec["formats"] = pyb::make_tuple("<u2", "<u2", "<u4", "<u8", "<u8", "<u4", "<u4");
        spec["offsets"] = pyb::make_tuple(offsetof(hal::TraceRecord, kind), offsetof(hal::TraceRecord, size),
                                          offsetof(hal::TraceRecord, metric), offsetof(hal::TraceRecord, ticks),
                                          offsetof(hal::TraceRecord, value), offsetof(hal::TraceRecord, subdevice),
                                          offsetof(hal::TraceRecord, sequence));
        spec["itemsize"] = sizeof(hal::TraceRecord);
        return pyb::dtype::from_args(spec);
    }());
    return *dt;
}

// A tracer as Python holds it. close() destroys it; every other call afterwards raises
// InvalidArgumentError (ZE_RESULT_ERROR_INVALID_NULL_HANDLE).
class PyTracer {
public:
    PyTracer(const hal::DeviceRef& device, const pyb::iterable& groups, pyb::handle notify_every_n_bytes,
             const hal::EventRef& notification)
        : device_(device_or_default(device)),
          groups_(groups_arg(groups, "MetricTracer")) {
        uint32_t notify = int_arg<uint32_t>(notify_every_n_bytes, "MetricTracer: notify_every_n_bytes",
                                            ZE_RESULT_ERROR_INVALID_SIZE);
        std::vector<const metrics::MetricGroup*> raw;
        for (const auto& g : groups_) raw.push_back(g.get());
        std::shared_ptr<metrics::Tracer> t;
        if (ze_result_t r = metrics::Tracer::create(device_, raw, &notify, notification, &t); r != ZE_RESULT_SUCCESS)
            check(r, "MetricTracer" + why_not(r, raw, notification));
        tracer_ = std::move(t);
    }

    // Why Tracer::create answered `r`, for the message: the group or event at fault.
    std::string why_not(ze_result_t r, const std::vector<const metrics::MetricGroup*>& groups,
                        const hal::EventRef& notification) const {
        const std::string on = " on " + device_->properties().name;
        for (const metrics::MetricGroup* g : groups) {
            const std::string name = "'" + g->info().name + "'";
            if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT && !g->tracer_based())
                return ": group " + name + " is not tracer-based";
            if (r == ZE_RESULT_NOT_READY && !g->owner().active(g->index()))
                return ": group " + name + " is not activated" + on + " (zehal.activate_metric_groups first)";
        }
        if (r == ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE) return ": a tracer already exists" + on;
        if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT && notification)
            return ": notification must be an event of a host-visible pool" + on;
        if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT) return ": groups of another device, or one group twice";
        return {};
    }

    void enable(bool synchronous) { run(&metrics::Tracer::enable, synchronous, "MetricTracer.enable"); }
    void disable(bool synchronous) { run(&metrics::Tracer::disable, synchronous, "MetricTracer.disable"); }

    pyb::bytes read(pyb::handle max_bytes) {
        // A reference of our own: a close() from another thread while the GIL is released
        // must not free the tracer under this call.
        // max_bytes is converted first: its __index__ may close the tracer.
        const std::optional<size_t> asked = max_bytes.is_none()
                                                ? std::nullopt
                                                : std::optional<size_t>(int_arg<size_t>(max_bytes,
                                                                                        "MetricTracer.read: max_bytes",
                                                                                        ZE_RESULT_ERROR_INVALID_SIZE));
        const std::shared_ptr<metrics::Tracer> keep = live_ref("MetricTracer.read");
        metrics::Tracer& t = *keep;
        // Never more than the ring holds: no need for a larger buffer.
        const size_t want = asked ? std::min(*asked, t.ring_capacity()) : t.available();
        // Read into memory of our own without the GIL, then made into bytes with it: a daemon
        // thread still reading when the interpreter exits must not write into memory of
        // Python's allocator, which finalization frees.
        std::vector<char> buffer(want);
        size_t size = want;
        ze_result_t r = ZE_RESULT_SUCCESS;
        if (want == 0) {
            // Nothing asked for: only the state, as a size query tells it.
            r = t.read(&size, nullptr);
            size = 0;
        } else
            r = without_gil([&] { return t.read(&size, buffer.data()); });
        if (r != ZE_RESULT_WARNING_DROPPED_DATA) check(r, "MetricTracer.read");
        return pyb::bytes(buffer.data(), size);
    }

    bool enabled() const { return tracer_ && tracer_->enabled(); }
    size_t available() { return live("MetricTracer.available").available(); }
    uint64_t dropped() { return live("MetricTracer.dropped").dropped(); }
    uint32_t notify_every_n_bytes() { return live("MetricTracer.notify_every_n_bytes").notify_every_n_bytes(); }
    uint64_t produced() {
        live("MetricTracer.produced");
        return device_->trace_source()->produced();
    }
    std::vector<PyMetric> decodable_metrics() {
        return metric_list(live("MetricTracer.decodable_metrics").decodable_metrics());
    }
    std::vector<PyMetricGroup> groups() const {
        std::vector<PyMetricGroup> out;
        for (const auto& g : groups_) out.push_back({g});
        return out;
    }
    const hal::DeviceRef& device() const { return device_; }
    bool closed() const { return !tracer_; }
    const std::shared_ptr<metrics::Tracer>& tracer(std::string_view what) {
        live(what);
        return tracer_;
    }

    // Destroys the tracer: ObjectInUseError while enabled; idempotent afterwards. Waits
    // for the drain thread without the GIL.
    void close() {
        if (!tracer_) return;
        std::shared_ptr<metrics::Tracer> keep = tracer_;
        ze_result_t r;
        r = without_gil([&] { return keep->destroy(); });
        // Another thread closed (or is closing) it while the GIL was released: closed all the same.
        if (r == ZE_RESULT_ERROR_INVALID_NULL_HANDLE) r = ZE_RESULT_SUCCESS;
        check(r, "MetricTracer.close");
        if (tracer_ == keep) tracer_.reset();
        without_gil([&] { keep.reset(); });  // frees the ring without the GIL (when the last reference)
    }

    // Leaving a `with` block: disable (waiting) if enabled, then close.
    void exit() {
        if (!tracer_) return;
        if (tracer_->enabled()) disable(true);
        close();
    }

private:
    metrics::Tracer& live(std::string_view what) {
        if (!tracer_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the tracer is closed");
        return *tracer_;
    }
    // The tracer, held by the caller for a call made without the GIL.
    std::shared_ptr<metrics::Tracer> live_ref(std::string_view what) {
        live(what);
        return tracer_;
    }
    void run(ze_result_t (metrics::Tracer::*f)(bool), bool synchronous, std::string_view what) {
        const std::shared_ptr<metrics::Tracer> keep = live_ref(what);
        ze_result_t r;
        r = without_gil([&] { return (keep.get()->*f)(synchronous); });
        check(r, what);
    }

    hal::DeviceRef device_;
    std::vector<metrics::MetricGroupRef> groups_;
    std::shared_ptr<metrics::Tracer> tracer_;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyTracer)

namespace zehal::py {
namespace {

// A decoder as Python holds it; it keeps what it needs from its tracer, not the tracer.
class PyDecoder {
public:
    explicit PyDecoder(PyTracer& tracer) {
        std::shared_ptr<metrics::Decoder> d;
        check(metrics::Decoder::create(tracer.tracer("MetricDecoder"), &d), "MetricDecoder");
        decoder_ = std::move(d);
    }

    std::vector<PyMetric> decodable_metrics() { return metric_list(live("MetricDecoder.decodable_metrics").metrics()); }
    uint32_t sets() { return live("MetricDecoder.sets").sets(); }

    pyb::tuple decode(const pyb::buffer& raw, const std::optional<std::vector<PyMetric>>& metrics) {
        // A reference of our own: a close() from another thread while the GIL is released
        // must not free the decoder under this call.
        // The input's export first: an exporter's __buffer__ may close the decoder.
        const pyb::buffer_info view = raw.request();
        const std::shared_ptr<metrics::Decoder> keep = live_ref("MetricDecoder.decode");
        metrics::Decoder& d = *keep;
        std::vector<const metrics::Metric*> subset;
        if (metrics) {
            if (metrics->empty()) check(ZE_RESULT_ERROR_INVALID_SIZE, "MetricDecoder.decode: metrics is empty");
            for (const PyMetric& m : *metrics) subset.push_back(m.metric.get());
            const std::vector<metrics::MetricRef> known = d.metrics();
            for (const metrics::Metric* m : subset)
                if (std::none_of(known.begin(), known.end(), [m](const metrics::MetricRef& k) { return k.get() == m; }))
                    check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "MetricDecoder.decode: metric '" + m->info().name +
                                                                "' is not one of this decoder's decodable_metrics");
        }
        if (!view.ptr && view.size) check(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "MetricDecoder.decode");
        bool contiguous = true;
        ssize_t expect = view.itemsize;
        for (ssize_t k = view.ndim - 1; k >= 0; --k) {
            contiguous &= view.strides[k] == expect;
            expect *= view.shape[k];
        }
        if (!contiguous) throw pyb::value_error("MetricDecoder.decode: raw must be C-contiguous bytes");
        const size_t size = static_cast<size_t>(view.size * view.itemsize);
        // The decoder runs without the GIL on a copy of its own: it reads the input twice
        // (counting, then placing), and another thread may rewrite a NumPy array or a
        // bytearray meanwhile; and a daemon thread still decoding at interpreter exit must not
        // read memory of Python's allocator, which finalization frees.
        const std::vector<std::byte> copied(static_cast<const std::byte*>(view.ptr),
                                            static_cast<const std::byte*>(view.ptr) + size);
        const void* data = copied.data();

        // Counting, then decoding into an array made for exactly those entries.
        size_t raw_size = size;
        uint32_t sets = 0, count = 0;
        ze_result_t r;
        r = without_gil([&] { return d.decode(&raw_size, data, subset, &sets, nullptr, &count, nullptr); });
        // Corrupt or truncated data still counts the whole records before the fault: they
        // are decoded and ride on the InvalidArgumentError raised below.
        const bool corrupt = r == ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (!corrupt) check(r, "MetricDecoder.decode");
        pyb::array entries(entry_dtype(), std::vector<pyb::ssize_t>{static_cast<pyb::ssize_t>(count)});
        std::vector<uint32_t> per_set(sets, 0);
        raw_size = corrupt ? 0 : size;
        if (count || (!corrupt && size)) {
            // Decoded into memory of our own (see above), then copied into the array with the
            // GIL. A chunk without entries is decoded too, into one slot that stays unused:
            // its clock-sync records carry over to the next decode.
            std::vector<metrics::MetricEntry> decoded(count ? count : 1);
            uint32_t slots = static_cast<uint32_t>(decoded.size());
            raw_size = size;
            r = without_gil(
                [&] { return d.decode(&raw_size, data, subset, &sets, per_set.data(), &slots, decoded.data()); });
            count = std::min(count, slots);
            if (count) std::memcpy(entries.mutable_data(), decoded.data(), count * sizeof(metrics::MetricEntry));
        }
        pyb::list counts;
        for (uint32_t c : per_set) counts.append(c);
        if (corrupt && r == ZE_RESULT_SUCCESS) r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
        try {
            check(r, r == ZE_RESULT_ERROR_INVALID_ARGUMENT
                         ? "MetricDecoder.decode: raw data truncated or corrupt (whole records before it: .entries)"
                         : "MetricDecoder.decode");
        } catch (pyb::error_already_set& e) {
            if (r == ZE_RESULT_ERROR_INVALID_ARGUMENT) {
                e.value().attr("entries") = entries;
                e.value().attr("counts_per_set") = counts;
                e.value().attr("consumed") = raw_size;
            }
            throw;
        }
        return pyb::make_tuple(entries, counts);
    }

    bool closed() const { return !decoder_; }
    void close() {
        if (decoder_) {
            decoder_->destroy();
            decoder_.reset();
        }
    }

private:
    metrics::Decoder& live(std::string_view what) {
        if (!decoder_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the decoder is closed");
        return *decoder_;
    }
    std::shared_ptr<metrics::Decoder> live_ref(std::string_view what) {
        live(what);
        return decoder_;
    }
    std::shared_ptr<metrics::Decoder> decoder_;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyDecoder)

namespace zehal::py {
namespace {

// Raises OSError for errno `error` on `path`.
[[noreturn]] void raise_os_error(int error, const std::string& path) {
    errno = error;
    PyErr_SetFromErrnoWithFilename(PyExc_OSError, path.c_str());
    throw pyb::error_already_set();
}

// A rank's streamed trace file as Python holds it (zehal.rank_trace). Every method that
// encodes or writes runs without the GIL; close() is idempotent and raises OSError for a
// write that failed on the way.
class PyRankStream {
public:
    PyRankStream(const std::string& path, uint32_t rank, int64_t offset_ns, int64_t drift_ppb) : path_(path) {
        try {
            stream_ = std::make_shared<metrics::RankStream>(path, rank, offset_ns, drift_ppb);
        } catch (const std::system_error& e) {
            raise_os_error(e.code().value(), path);
        }
    }

    void write(const pyb::bytes& packets) {
        std::string data = packets;  // a copy of our own, written without the GIL
        const auto s = live();
        without_gil([&] { s->write(data); });
    }

    void add_entries(const pyb::array& entries, const std::vector<std::string>& names, uint64_t dropped,
                     uint64_t now_ns) {
        if (!entries.dtype().equal(entry_dtype()) || entries.ndim() != 1 ||
            (entries.size() > 1 && entries.strides(0) != sizeof(metrics::MetricEntry)))
            throw pyb::value_error("RankStream.add_entries: entries must be a contiguous 1-D METRIC_ENTRY_DTYPE array");
        const auto* first = static_cast<const metrics::MetricEntry*>(entries.data());
        const std::vector<metrics::MetricEntry> copied(first, first + entries.size());
        const auto s = live();
        without_gil([&] { s->add_entries(copied, names, dropped, now_ns); });
    }

    void add_api_calls(const std::vector<std::tuple<std::string, uint64_t, uint64_t, uint64_t>>& calls) {
        std::vector<metrics::ApiCall> converted;
        converted.reserve(calls.size());
        for (const auto& [name, start, end, thread] : calls) converted.push_back({name, start, end, thread});
        const auto s = live();
        without_gil([&] { s->add_api_calls(converted); });
    }

    void close_command() {
        const auto s = live();
        without_gil([&] { s->close_command(); });
    }

    void start(PyTracer* tracer, double poll_s, bool on_rank_clock, bool api_calls) {
        if (!(poll_s > 0)) throw pyb::value_error("RankStream.start: poll_s must be positive");
        if (!tracer && !api_calls) throw pyb::value_error("RankStream.start: give a tracer, api_calls=True or both");
        const auto t = tracer ? tracer->tracer("RankStream.start") : nullptr;
        check(live()->start(t, static_cast<uint64_t>(poll_s * 1e9), on_rank_clock, api_calls), "RankStream.start");
    }

    void stop() {
        const auto s = live();
        without_gil([&] { s->stop(); });
    }

    void close() {
        if (!stream_) return;
        std::shared_ptr<metrics::RankStream> keep = std::move(stream_);
        const int error = without_gil([&] { return keep->close(); });
        if (error) raise_os_error(error, path_);
    }

    bool closed() const { return !stream_; }
    const std::string& path() const { return path_; }

private:
    // The stream, held by the caller for a call made without the GIL.
    std::shared_ptr<metrics::RankStream> live() {
        if (!stream_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "RankStream: the stream is closed");
        return stream_;
    }

    std::string path_;
    std::shared_ptr<metrics::RankStream> stream_;
};

}  // namespace
}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyRankStream)

namespace zehal::py {
namespace {

void bind_rank_stream(pyb::module_& m) {
    pyb::class_<PyRankStream>(m, "RankStream",
                              "One rank's Perfetto trace file, streamed as a tracer is drained: a native thread "
                              "reads, decodes and appends the records as packets (docs/tracing.md).")
        .def(pyb::init<const std::string&, uint32_t, int64_t, int64_t>(), pyb::arg("path"), pyb::arg("rank"),
             pyb::arg("offset_ns") = 0, pyb::arg("drift_ppb") = 0,
             "Creates (truncating) the file of `rank`; times are written as raw + offset_ns + raw × "
             "drift_ppb / 1e9 (the test-only clock skew). OSError when the file cannot be made.")
        .def("write", &PyRankStream::write, pyb::arg("packets"), "Appends Trace bytes made by the caller.")
        .def("add_entries", &PyRankStream::add_entries, pyb::arg("entries"), pyb::arg("names"), pyb::arg("dropped"),
             pyb::arg("now_ns"),
             "Encodes decoded entries (METRIC_ENTRY_DTYPE; metric names by index) and the dropped count at "
             "now_ns (unskewed host ns) when it changed, and appends them.")
        .def("add_api_calls", &PyRankStream::add_api_calls, pyb::arg("calls"),
             "Appends host API calls (name, start ns, end ns, thread id) as slices on a track per thread.")
        .def("close_command", &PyRankStream::close_command, "Appends the command still open, if any.")
        .def("start", &PyRankStream::start, pyb::arg("tracer"), pyb::arg("poll_s") = 0.02,
             pyb::arg("on_rank_clock") = false, pyb::arg("api_calls") = false,
             "Drains the enabled `tracer` (None: none) into the file every poll_s seconds on a native thread. "
             "on_rank_clock: the device's synchronized timestamps already carry the rank's (test-only) clock "
             "skew, as a sim device's do; else the skew is applied to the decoded times. api_calls: also record "
             "this process's host API calls (the methods _TimedMethod wraps, the C API's entry points), drained by "
             "the same thread; ObjectInUseError while another stream records them.")
        .def("stop", &PyRankStream::stop,
             "Stops the thread, the recording of API calls and the tracer, and appends what is left. Nothing "
             "when not started.")
        .def("close", &PyRankStream::close, "Stops and closes the file. Idempotent.")
        .def_property_readonly("closed", &PyRankStream::closed, "True after close().")
        .def_property_readonly("path", &PyRankStream::path, "The file written.");
}

}  // namespace

void bind_tracer(pyb::module_& m) {
    m.attr("METRIC_ENTRY_DTYPE") = entry_dtype();
    m.attr("TRACE_RECORD_DTYPE") = record_dtype();
    pyb::class_<PyTracer>(m, "MetricTracer",
                          "Traces tracer-based metric groups of a device: a drain thread moves the device's "
                          "asynchronous events into a host ring that read() empties. Created disabled; one per "
                          "device. A context manager: leaving the block disables and closes it.")
        .def(pyb::init<const hal::DeviceRef&, const pyb::iterable&, pyb::handle, const hal::EventRef&>(),
             pyb::arg("device"), pyb::arg("groups"), pyb::arg("notify_every_n_bytes") = 0,
             pyb::arg("notification") = pyb::none(),
             "device: a Device (None: the default device); groups: activated tracer-based MetricGroups; "
             "notify_every_n_bytes: when `notification` (an Event) is signalled (rounded up to whole "
             "records, clamped to the ring, 0: a default). NotReadyError for a group not activated, "
             "ObjectInUseError when the device has a tracer, InvalidArgumentError for a group that "
             "is not tracer-based.")
        .def("enable", &PyTracer::enable, pyb::arg("synchronous") = true,
             "Starts tracing (adds an enable record). synchronous=False returns at once.")
        .def("disable", &PyTracer::disable, pyb::arg("synchronous") = true,
             "Stops tracing (adds a disable record); what was gathered stays readable.")
        .def("read", &PyTracer::read, pyb::arg("max_bytes") = pyb::none(),
             "Raw data, whole 32-byte records only, at most max_bytes (None: all available), without the "
             "GIL. b'' when enabled with nothing yet; NotReadyError when never enabled, or disabled with "
             "nothing left. Lost records show in `dropped` and as RECORD_DROPPED records.")
        .def_property_readonly("enabled", &PyTracer::enabled, "True after enable() (until disable()).")
        .def_property_readonly("available", &PyTracer::available, "Bytes read() would return now.")
        .def_property_readonly("dropped", &PyTracer::dropped, "Records lost so far (device buffer and ring).")
        .def_property_readonly("produced", &PyTracer::produced,
                               "Records the device produced since the last enable, lost ones included.")
        .def_property_readonly("notify_every_n_bytes", &PyTracer::notify_every_n_bytes, "The value in use.")
        .def_property_readonly("decodable_metrics", &PyTracer::decodable_metrics,
                               "Metrics the raw data refers to by index.")
        .def_property_readonly("groups", &PyTracer::groups, "The groups traced.")
        .def_property_readonly("device", &PyTracer::device, "The device traced.")
        .def_property_readonly("closed", &PyTracer::closed, "True after close().")
        .def("close", &PyTracer::close, "Destroys the tracer (ObjectInUseError while enabled). Idempotent.")
        .def("__enter__", &enter<PyTracer>)
        .def("__exit__", [](PyTracer& t, pyb::args) { t.exit(); })
        .def("__repr__", [](const PyTracer& t) {
            if (t.closed()) return std::string("<zehal.MetricTracer closed>");
            return std::string("<zehal.MetricTracer ") + (t.enabled() ? "enabled" : "disabled") + ">";
        });

    pyb::class_<PyDecoder>(m, "MetricDecoder",
                           "Decodes a MetricTracer's raw data into entries; usable after the tracer is closed.")
        .def(pyb::init<PyTracer&>(), pyb::arg("tracer"))
        .def_property_readonly("decodable_metrics", &PyDecoder::decodable_metrics,
                               "Metrics the raw data refers to by index (a list of Metric).")
        .def_property_readonly("sets", &PyDecoder::sets,
                               "Number of entry sets: one per sub-device, one without sub-devices.")
        .def("decode", &PyDecoder::decode, pyb::arg("raw"), pyb::arg("metrics") = pyb::none(),
             "(entries, counts_per_set): entries a NumPy structured array (METRIC_ENTRY_DTYPE: value "
             "uint64 bits, timestamp uint64 host ns, metric_index uint32 into `metrics`, on_subdevice bool, "
             "subdevice_id uint32) laid out set by set; counts_per_set a list. metrics: decodable metrics "
             "to keep (None: all). Decodes without the GIL. InvalidArgumentError for truncated or corrupt "
             "data (its `entries`, `counts_per_set` and `consumed` hold the whole records decoded before "
             "the fault and the raw bytes they span) or empty raw.")
        .def_property_readonly("closed", &PyDecoder::closed, "True after close().")
        .def("close", &PyDecoder::close, "Destroys the decoder. Idempotent.")
        .def("__enter__", &enter<PyDecoder>)
        .def("__exit__", [](PyDecoder& d, pyb::args) { d.close(); })
        .def("__repr__",
             [](const PyDecoder& d) { return std::string("<zehal.MetricDecoder") + (d.closed() ? " closed>" : ">"); });
    bind_rank_stream(m);
}

}  // namespace zehal::py
