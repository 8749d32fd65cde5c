// zehal's public C++ API: metric groups, the tracer and the decoder.
#pragma once

#include <zehal/device.hpp>
#include <zehal/error.hpp>
#include <zehal/events.hpp>
#include <zehal/metrics.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zehal {

// One metric (a cheap reference, valid while the process lives).
class Metric {
public:
    explicit Metric(zehal_metric_t handle) : handle_(handle) {}
    // Name, description, component, type, value type and units.
    zehal_metric_properties_t properties() const {
        zehal_metric_properties_t p{};
        detail::check(zehal_metric_get_properties(handle_, &p), "zehal::Metric::properties");
        return p;
    }
    // The C handle, for the C API.
    zehal_metric_t handle() const noexcept { return handle_; }
    // The same metric.
    friend bool operator==(const Metric& a, const Metric& b) noexcept { return a.handle_ == b.handle_; }

private:
    zehal_metric_t handle_;
};

// A metric group of a device (a cheap reference, valid while the process lives).
class MetricGroup {
public:
    explicit MetricGroup(zehal_metric_group_t handle) : handle_(handle) {}
    // Every metric group of `device`.
    static std::vector<MetricGroup> of(const Device& device) {
        uint32_t n = 0;
        detail::check(zehal_metric_group_get(device.handle(), &n, nullptr), "zehal::MetricGroup::of");
        std::vector<zehal_metric_group_t> handles(n);
        detail::check(zehal_metric_group_get(device.handle(), &n, handles.data()), "zehal::MetricGroup::of");
        return std::vector<MetricGroup>(handles.begin(), handles.begin() + n);
    }
    // Name, description, sampling types, type flags.
    zehal_metric_group_properties_t properties() const {
        zehal_metric_group_properties_t p{};
        detail::check(zehal_metric_group_get_properties(handle_, &p), "zehal::MetricGroup::properties");
        return p;
    }
    // Its metrics.
    std::vector<Metric> metrics() const {
        uint32_t n = 0;
        detail::check(zehal_metric_get(handle_, &n, nullptr), "zehal::MetricGroup::metrics");
        std::vector<zehal_metric_t> handles(n);
        if (n) detail::check(zehal_metric_get(handle_, &n, handles.data()), "zehal::MetricGroup::metrics");
        return std::vector<Metric>(handles.begin(), handles.begin() + n);
    }
    // True for a group a tracer can use.
    bool tracer_based() const { return properties().sampling_types & ZEHAL_METRIC_SAMPLING_TYPE_TRACER_BASED; }
    // Makes `groups` the device's active set (replacing the previous one).
    static void activate(const Device& device, const std::vector<MetricGroup>& groups) {
        std::vector<zehal_metric_group_t> h = handles(groups);
        detail::check(zehal_device_activate_metric_groups(device.handle(), static_cast<uint32_t>(h.size()), h.data()),
                      "zehal::MetricGroup::activate");
    }
    // The C handle, for the C API.
    zehal_metric_group_t handle() const noexcept { return handle_; }
    // The C handles of `groups`.
    static std::vector<zehal_metric_group_t> handles(const std::vector<MetricGroup>& groups) {
        std::vector<zehal_metric_group_t> h;
        h.reserve(groups.size());
        for (const MetricGroup& g : groups) h.push_back(g.handle_);
        return h;
    }
    // The same group.
    friend bool operator==(const MetricGroup& a, const MetricGroup& b) noexcept { return a.handle_ == b.handle_; }

private:
    zehal_metric_group_t handle_;
};

// A tracer of activated tracer-based groups: enable it, read raw records, disable it. One
// per device. Move-only; destroyed (disabled first when enabled) when it goes.
class Tracer {
public:
    // A tracer over `groups` (activated on `device`). `notification`, when given (an event of
    // a pool of `device`), is signalled once at least notify_every_n_bytes can be read (0: a
    // default; rounded up to whole records and clamped to the tracer's buffer).
    Tracer(const Device& device, const std::vector<MetricGroup>& groups, uint32_t notify_every_n_bytes = 0,
           const Event* notification = nullptr)
        : notify_bytes_(notify_every_n_bytes) {
        if (notification && !notification->handle())
            throw Error(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zehal::Tracer: notification");
        std::vector<zehal_metric_group_t> h = MetricGroup::handles(groups);
        zehal_metric_tracer_t t = nullptr;
        detail::check(zehal_metric_tracer_create(device.handle(), static_cast<uint32_t>(h.size()), h.data(),
                                                 &notify_bytes_, notification ? notification->handle() : nullptr, &t),
                      "zehal::Tracer");
        tracer_.reset(t);
    }
    // The bytes after which the notification event is signalled, as the tracer uses them.
    uint32_t notify_every_n_bytes() const noexcept { return notify_bytes_; }
    // Starts (synchronous: returns once it changed) / stops delivering records.
    void enable(bool synchronous = true) {
        detail::check(zehal_metric_tracer_enable(tracer_.get(), synchronous), "zehal::Tracer::enable");
    }
    void disable(bool synchronous = true) {
        detail::check(zehal_metric_tracer_disable(tracer_.get(), synchronous), "zehal::Tracer::disable");
    }
    // Whole records available now, at most `max_bytes` (contract §5.2); empty when none yet,
    // or once disabled and drained. Records lost since the last read are counted by dropped().
    // max_bytes 0 throws INVALID_SIZE.
    std::vector<uint8_t> read(size_t max_bytes = 1u << 20) {
        if (max_bytes == 0) throw Error(ZE_RESULT_ERROR_INVALID_SIZE, "zehal::Tracer::read: max_bytes 0");
        std::vector<uint8_t> out(max_bytes);
        size_t size = out.size();
        const ze_result_t r = zehal_metric_tracer_read_data(tracer_.get(), &size, out.data());
        if (r == ZE_RESULT_NOT_READY)
            size = 0;
        else if (r != ZE_RESULT_WARNING_DROPPED_DATA)
            detail::check(r, "zehal::Tracer::read");
        out.resize(size);
        return out;
    }
    // Bytes of whole records that can be read now.
    size_t available() const {
        size_t size = 0;
        const ze_result_t r = zehal_metric_tracer_read_data(tracer_.get(), &size, nullptr);
        if (r == ZE_RESULT_NOT_READY) return 0;
        if (r != ZE_RESULT_WARNING_DROPPED_DATA) detail::check(r, "zehal::Tracer::available");
        return size;
    }
    // Records lost so far.
    uint64_t dropped() const {
        uint64_t n = 0;
        detail::check(zehal_metric_tracer_get_dropped(tracer_.get(), &n), "zehal::Tracer::dropped");
        return n;
    }
    // The C handle, for the C API.
    zehal_metric_tracer_t handle() const noexcept { return tracer_.get(); }

private:
    // Disables (waiting) then destroys the tracer.
    struct Destroy {
        void operator()(zehal_metric_tracer_t t) const noexcept {
            zehal_metric_tracer_disable(t, 1);
            zehal_metric_tracer_destroy(t);
        }
    };
    uint32_t notify_bytes_;
    std::unique_ptr<zehal_metric_tracer, Destroy> tracer_;
};

// What Decoder::decode made of raw data.
struct Decoded {
    std::vector<Metric> metrics;                // an entry's metric_index is its position here
    std::vector<zehal_metric_entry_t> entries;  // laid out set by set (one set per sub-device)
    std::vector<uint32_t> entries_per_set;      // entries of each set
};

// Turns a tracer's raw records into metric entries (usable after the tracer goes).
// Clock references carry over from one decode to the next, so raw data may be decoded in
// pieces, in the order it was read.
class Decoder {
public:
    explicit Decoder(const Tracer& tracer) {
        zehal_metric_decoder_t d = nullptr;
        detail::check(zehal_metric_decoder_create(tracer.handle(), &d), "zehal::Decoder");
        decoder_.reset(d);
    }
    // The metrics the tracer's raw data refers to.
    std::vector<Metric> decodable_metrics() const {
        uint32_t n = 0;
        detail::check(zehal_metric_decoder_get_decodable_metrics(decoder_.get(), &n, nullptr),
                      "zehal::Decoder::decodable_metrics");
        std::vector<zehal_metric_t> handles(n);
        if (n)
            detail::check(zehal_metric_decoder_get_decodable_metrics(decoder_.get(), &n, handles.data()),
                          "zehal::Decoder::decodable_metrics");
        return std::vector<Metric>(handles.begin(), handles.begin() + n);
    }
    // Every entry of `raw` (whole records, as Tracer::read returns them) for `metrics`
    // (decodable, each once; empty: every decodable metric). Empty raw data throws
    // INVALID_SIZE, corrupt or truncated data INVALID_ARGUMENT.
    Decoded decode(const std::vector<uint8_t>& raw, std::vector<Metric> metrics = {}) {
        if (raw.empty()) throw Error(ZE_RESULT_ERROR_INVALID_SIZE, "zehal::Decoder::decode: no raw data");
        Decoded out;
        out.metrics = metrics.empty() ? decodable_metrics() : std::move(metrics);
        std::vector<zehal_metric_t> m;
        m.reserve(out.metrics.size());
        for (const Metric& metric : out.metrics) m.push_back(metric.handle());
        const uint32_t n = static_cast<uint32_t>(m.size());
        size_t size = raw.size();
        uint32_t sets = 0, count = 0;
        detail::check(
            zehal_metric_tracer_decode(decoder_.get(), &size, raw.data(), n, m.data(), &sets, nullptr, &count, nullptr),
            "zehal::Decoder::decode");
        if (count == 0) return out;
        out.entries.resize(count);
        out.entries_per_set.resize(sets);
        size = raw.size();
        detail::check(zehal_metric_tracer_decode(decoder_.get(), &size, raw.data(), n, m.data(), &sets,
                                                 out.entries_per_set.data(), &count, out.entries.data()),
                      "zehal::Decoder::decode");
        out.entries.resize(count);
        out.entries_per_set.resize(sets);
        return out;
    }
    // The C handle, for the C API.
    zehal_metric_decoder_t handle() const noexcept { return decoder_.get(); }

private:
    struct Destroy {
        void operator()(zehal_metric_decoder_t d) const noexcept { zehal_metric_decoder_destroy(d); }
    };
    std::unique_ptr<zehal_metric_decoder, Destroy> decoder_;
};

}  // namespace zehal
