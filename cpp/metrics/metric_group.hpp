// Metric groups and metrics of a device as handles, and their activation (contract §4).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/device.hpp"
#include "hal/metric_info.hpp"

namespace zehal::metrics {

class DeviceMetrics;
class MetricGroup;

// One metric of a group. Lives as long as its group.
class Metric {
public:
    Metric(const MetricGroup* group, uint32_t index) : group_(group), index_(index) {}
    // Name, description, component, tier, metric type, result type, units.
    const hal::MetricInfo& info() const;
    // The group it belongs to.
    const MetricGroup& group() const { return *group_; }
    // Index inside its group.
    uint32_t index() const { return index_; }
    // Device-wide id: the `metric` of the hardware trace records of this metric.
    uint32_t device_id() const;

private:
    const MetricGroup* group_;
    uint32_t index_;
};

// One metric group of a device. Handles are shared pointers that keep the device alive.
class MetricGroup {
public:
    MetricGroup(const DeviceMetrics* owner, uint32_t index, const hal::MetricGroupInfo* info);
    MetricGroup(const MetricGroup&) = delete;
    MetricGroup& operator=(const MetricGroup&) = delete;

    // Name, description, sampling types, type flags, domain and metrics as plain data.
    const hal::MetricGroupInfo& info() const { return *info_; }
    // Index in the device's metric_groups().
    uint32_t index() const { return index_; }
    // Its metrics, in order.
    const std::vector<Metric>& metrics() const { return metrics_; }
    // The device's metric state it belongs to.
    const DeviceMetrics& owner() const { return *owner_; }
    // True when the group's sampling types include TRACER_BASED.
    bool tracer_based() const { return info_->sampling_types & hal::kSamplingTracerBased; }
    // True when the group's sampling types include `type` (a hal::SamplingType bit).
    bool samples(hal::SamplingType type) const { return info_->sampling_types & type; }

private:
    const DeviceMetrics* owner_;
    uint32_t index_;
    const hal::MetricGroupInfo* info_;
    std::vector<Metric> metrics_;
};

using MetricGroupRef = std::shared_ptr<const MetricGroup>;
using MetricRef = std::shared_ptr<const Metric>;

class Tracer;

// The metric state of one device: its groups as handles, the activated set, and the one
// tracer it may have. One per live device; every method is thread-safe.
class DeviceMetrics : public std::enable_shared_from_this<DeviceMetrics> {
public:
    // The state of `device` (created on first use). INVALID_NULL_HANDLE for a null device.
    static ze_result_t of(const hal::DeviceRef& device, std::shared_ptr<DeviceMetrics>* out);

    // The group, or metric, of a live device's state that `p` points at, as a handle;
    // null when `p` is no such object (how the C API checks its handles).
    static MetricGroupRef find_group(const void* p);
    static MetricRef find_metric(const void* p);

    explicit DeviceMetrics(const hal::DeviceRef& device);

    // The device (null once it is gone).
    hal::DeviceRef device() const { return device_.lock(); }
    // Number of groups.
    uint32_t group_count() const { return static_cast<uint32_t>(groups_.size()); }
    // Handle of group `index` (< group_count()); keeps the device and this state alive.
    MetricGroupRef group(uint32_t index) const;
    // Handle of a metric of one of this device's groups, keeping them alive.
    MetricRef metric(const Metric& m) const;
    // Raw pointer of group `index`, valid while this state lives.
    const MetricGroup* group_ptr(uint32_t index) const { return groups_[index].get(); }

    // Activates `groups` (replacing the previous set; empty deactivates all).
    // INVALID_NULL_HANDLE for a null group; INVALID_ARGUMENT for a group of another device
    // or two groups of one domain.
    ze_result_t activate(std::span<const MetricGroup* const> groups);
    // Whether group `index` is in the activated set.
    bool active(uint32_t index) const;

    // Reserves the device's tracer slot; HANDLE_OBJECT_IN_USE when a tracer exists, unless
    // it yields (set_tracer_yield): it is then asked to end first.
    ze_result_t claim_tracer();
    // Frees the tracer slot (and forgets its holder's yield).
    void release_tracer();
    // Lets the tracer holding the slot (the trace of a program without Python) give it up to
    // the next claim: that claim calls `yield`, once, without this state's lock; `yield`
    // ends the tracer, which frees the slot.
    void set_tracer_yield(std::function<void()> yield);
    // Reserves the device's streamer slot; HANDLE_OBJECT_IN_USE when a streamer is open.
    ze_result_t claim_streamer();
    // Frees the streamer slot.
    void release_streamer();

private:
    std::weak_ptr<hal::Device> device_;
    std::vector<std::unique_ptr<MetricGroup>> groups_;
    mutable std::mutex mu_;
    std::vector<bool> active_;
    bool tracer_ = false;
    std::function<void()> yield_;  // the slot's holder gives it up (set_tracer_yield)
    bool streamer_ = false;
};

// Handles of every metric group of `device`.
ze_result_t metric_groups(const hal::DeviceRef& device, std::vector<MetricGroupRef>* out);
// Activates `groups` on `device`, replacing the previous set (contract §4).
// DEVICE_LOST once the device is lost.
ze_result_t activate(const hal::DeviceRef& device, std::span<const MetricGroupRef> groups);
// DEVICE_LOST when `device` was lost, else SUCCESS (a global timestamp read probes it).
ze_result_t device_alive(hal::Device& device);

}  // namespace zehal::metrics
