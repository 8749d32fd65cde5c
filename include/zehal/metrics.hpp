// zehal's public C++ API: metric groups, the tracer and the decoder.
#pragma once

#include <zehal/device.hpp>
#include <zehal/error.hpp>
#include <zehal/metrics.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zehal {

// A metric group of a device (a cheap reference, valid while the process lives).
class MetricGroup {
public:
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
    // True for a group a tracer can use.
    bool tracer_based() const { return properties().sampling_types & ZEHAL_METRIC_SAMPLING_TYPE_TRACER_BASED; }
    // Makes `groups` the device's active set (replacing the previous one).
    static void activate(const Device& device, std::vector<MetricGroup> groups) {
        std::vector<zehal_metric_group_t> h(groups.begin(), groups.end());
        detail::check(zehal_device_activate_metric_groups(device.handle(), static_cast<uint32_t>(h.size()), h.data()),
                      "zehal::MetricGroup::activate");
    }
    // The C handle, for the C API.
    zehal_metric_group_t handle() const noexcept { return handle_; }
    operator zehal_metric_group_t() const noexcept { return handle_; }
    MetricGroup(zehal_metric_group_t handle) : handle_(handle) {}

private:
    zehal_metric_group_t handle_;
};

// A tracer of activated tracer-based groups: enable it, read raw records, disable it. One
// per device. Move-only; destroyed (disabled first when enabled) when it goes.
class Tracer {
public:
    // A tracer over `groups` (activated on `device`); notify_every_n_bytes 0: a default.
    Tracer(const Device& device, const std::vector<MetricGroup>& groups, uint32_t notify_every_n_bytes = 0) {
        std::vector<zehal_metric_group_t> h(groups.begin(), groups.end());
        uint32_t notify = notify_every_n_bytes;
        zehal_metric_tracer_t t = nullptr;
        detail::check(zehal_metric_tracer_create(device.handle(), static_cast<uint32_t>(h.size()), h.data(), &notify,
                                                 nullptr, &t),
                      "zehal::Tracer");
        tracer_.reset(t);
    }
    // Starts (synchronous: returns once it changed) / stops delivering records.
    void enable(bool synchronous = true) {
        detail::check(zehal_metric_tracer_enable(tracer_.get(), synchronous), "zehal::Tracer::enable");
    }
    void disable(bool synchronous = true) {
        detail::check(zehal_metric_tracer_disable(tracer_.get(), synchronous), "zehal::Tracer::disable");
    }
    // Whole records available now, at most `max_bytes` (contract §5.2); empty when none yet,
    // or once disabled and drained. Records lost since the last read are counted by dropped().
    std::vector<uint8_t> read(size_t max_bytes = 1u << 20) {
        std::vector<uint8_t> out(max_bytes);
        size_t size = out.size();
        const ze_result_t r = zehal_metric_tracer_read_data(tracer_.get(), &size, out.data());
        if (r == ZE_RESULT_NOT_READY) size = 0;
        else if (r != ZE_RESULT_WARNING_DROPPED_DATA) detail::check(r, "zehal::Tracer::read");
        out.resize(size);
        return out;
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
    std::unique_ptr<zehal_metric_tracer, Destroy> tracer_;
};

// Turns a tracer's raw records into metric entries (usable after the tracer goes).
class Decoder {
public:
    explicit Decoder(const Tracer& tracer) {
        zehal_metric_decoder_t d = nullptr;
        detail::check(zehal_metric_decoder_create(tracer.handle(), &d), "zehal::Decoder");
        decoder_.reset(d, [](zehal_metric_decoder_t p) { zehal_metric_decoder_destroy(p); });
    }
    // Number of metrics the decoder can decode.
    uint32_t decodable_metrics() const {
        uint32_t n = 0;
        detail::check(zehal_metric_decoder_get_decodable_metrics(decoder_.get(), &n, nullptr),
                      "zehal::Decoder::decodable_metrics");
        return n;
    }
    // Every entry of `raw` for every decodable metric, laid out set by set. Clock references
    // carry over from one call to the next, so raw data may be decoded in pieces.
    std::vector<zehal_metric_entry_t> decode(const std::vector<uint8_t>& raw) {
        if (raw.empty()) return {};
        uint32_t n = decodable_metrics();
        std::vector<zehal_metric_t> metrics(n);
        detail::check(zehal_metric_decoder_get_decodable_metrics(decoder_.get(), &n, metrics.data()), "zehal::Decoder");
        size_t size = raw.size();
        uint32_t sets = 0, count = 0;
        detail::check(zehal_metric_tracer_decode(decoder_.get(), &size, raw.data(), n, metrics.data(), &sets, nullptr,
                                                 &count, nullptr),
                      "zehal::Decoder::decode");
        std::vector<zehal_metric_entry_t> entries(count ? count : 1);
        std::vector<uint32_t> per_set(sets);
        uint32_t slots = static_cast<uint32_t>(entries.size());
        size = raw.size();
        detail::check(zehal_metric_tracer_decode(decoder_.get(), &size, raw.data(), n, metrics.data(), &sets,
                                                 per_set.data(), &slots, entries.data()),
                      "zehal::Decoder::decode");
        entries.resize(slots);
        return entries;
    }

private:
    std::shared_ptr<zehal_metric_decoder> decoder_;
};

}  // namespace zehal
