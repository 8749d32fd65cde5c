#include "metrics/metric_group.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace zehal::metrics {

const hal::MetricInfo& Metric::info() const { return group_->info().metrics[index_]; }

uint32_t Metric::device_id() const { return group_->info().first_metric_id + index_; }

MetricGroup::MetricGroup(const DeviceMetrics* owner, uint32_t index, const hal::MetricGroupInfo* info)
    : owner_(owner),
      index_(index),
      info_(info) {
    metrics_.reserve(info->metrics.size());
    for (uint32_t i = 0; i < info->metrics.size(); ++i) metrics_.emplace_back(this, i);
}

namespace {

// Live states by device. A state holds its device weakly, so a device nobody uses any
// more goes away and its entry is pruned on the next lookup.
struct Registry {
    std::mutex mu;
    std::map<const hal::Device*, std::shared_ptr<DeviceMetrics>> states;
};

Registry& registry() {
    static Registry* r = new Registry;  // never destroyed: used until the process exits
    return *r;
}

// What a handle keeps alive: the state and the device.
struct Keep {
    std::shared_ptr<const DeviceMetrics> state;
    hal::DeviceRef device;
};

}  // namespace

ze_result_t DeviceMetrics::of(const hal::DeviceRef& device, std::shared_ptr<DeviceMetrics>* out) {
    if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    for (auto it = r.states.begin(); it != r.states.end();) {
        if (it->second->device_.expired())
            it = r.states.erase(it);
        else
            ++it;
    }
    auto& slot = r.states[device.get()];
    if (!slot) slot = std::make_shared<DeviceMetrics>(device);
    *out = slot;
    return ZE_RESULT_SUCCESS;
}

MetricGroupRef DeviceMetrics::find_group(const void* p) {
    if (!p) return nullptr;
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    for (auto& [key, state] : r.states) {
        if (state->device_.expired()) continue;
        for (uint32_t i = 0; i < state->groups_.size(); ++i)
            if (state->groups_[i].get() == p) return state->group(i);
    }
    return nullptr;
}

MetricRef DeviceMetrics::find_metric(const void* p) {
    if (!p) return nullptr;
    Registry& r = registry();
    std::lock_guard lock(r.mu);
    for (auto& [key, state] : r.states) {
        if (state->device_.expired()) continue;
        for (const auto& g : state->groups_)
            for (const Metric& m : g->metrics())
                if (&m == p) return state->metric(m);
    }
    return nullptr;
}

DeviceMetrics::DeviceMetrics(const hal::DeviceRef& device) : device_(device) {
    const auto& infos = device->metric_groups();
    groups_.reserve(infos.size());
    for (uint32_t i = 0; i < infos.size(); ++i) groups_.push_back(std::make_unique<MetricGroup>(this, i, &infos[i]));
    active_.assign(infos.size(), false);
}

MetricGroupRef DeviceMetrics::group(uint32_t index) const {
    auto keep = std::make_shared<Keep>(Keep{shared_from_this(), device_.lock()});
    return MetricGroupRef(keep, groups_[index].get());
}

MetricRef DeviceMetrics::metric(const Metric& m) const {
    auto keep = std::make_shared<Keep>(Keep{shared_from_this(), device_.lock()});
    return MetricRef(keep, &m);
}

ze_result_t DeviceMetrics::activate(std::span<const MetricGroup* const> groups) {
    std::vector<bool> next(groups_.size(), false);
    std::vector<uint32_t> domains;
    for (const MetricGroup* g : groups) {
        if (!g) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (&g->owner() != this) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        for (uint32_t d : domains)
            if (d == g->info().domain) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        domains.push_back(g->info().domain);
        next[g->index()] = true;
    }
    std::lock_guard lock(mu_);
    active_ = std::move(next);
    return ZE_RESULT_SUCCESS;
}

bool DeviceMetrics::active(uint32_t index) const {
    std::lock_guard lock(mu_);
    return index < active_.size() && active_[index];
}

ze_result_t DeviceMetrics::claim_tracer() {
    std::function<void()> yield;
    {
        std::lock_guard lock(mu_);
        if (!tracer_) {
            tracer_ = true;
            return ZE_RESULT_SUCCESS;
        }
        if (!yield_) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
        yield = std::exchange(yield_, nullptr);
    }
    yield();  // ends the holder, which releases the slot
    std::lock_guard lock(mu_);
    if (tracer_) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;  // another claim came first
    tracer_ = true;
    return ZE_RESULT_SUCCESS;
}

void DeviceMetrics::release_tracer() {
    std::lock_guard lock(mu_);
    tracer_ = false;
    yield_ = nullptr;
}

void DeviceMetrics::set_tracer_yield(std::function<void()> yield) {
    std::lock_guard lock(mu_);
    yield_ = std::move(yield);
}

ze_result_t DeviceMetrics::claim_streamer() {
    std::lock_guard lock(mu_);
    if (streamer_) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
    streamer_ = true;
    return ZE_RESULT_SUCCESS;
}

void DeviceMetrics::release_streamer() {
    std::lock_guard lock(mu_);
    streamer_ = false;
}

ze_result_t metric_groups(const hal::DeviceRef& device, std::vector<MetricGroupRef>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::shared_ptr<DeviceMetrics> state;
    if (ze_result_t r = DeviceMetrics::of(device, &state); r != ZE_RESULT_SUCCESS) return r;
    out->clear();
    for (uint32_t i = 0; i < state->group_count(); ++i) out->push_back(state->group(i));
    return ZE_RESULT_SUCCESS;
}

ze_result_t device_alive(hal::Device& device) {
    uint64_t host = 0, ticks = 0;
    return device.global_timestamps(&host, &ticks) == ZE_RESULT_ERROR_DEVICE_LOST ? ZE_RESULT_ERROR_DEVICE_LOST
                                                                                  : ZE_RESULT_SUCCESS;
}

ze_result_t activate(const hal::DeviceRef& device, std::span<const MetricGroupRef> groups) {
    std::shared_ptr<DeviceMetrics> state;
    if (ze_result_t r = DeviceMetrics::of(device, &state); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = device_alive(*device); r != ZE_RESULT_SUCCESS) return r;
    std::vector<const MetricGroup*> raw;
    raw.reserve(groups.size());
    for (const MetricGroupRef& g : groups) raw.push_back(g.get());
    return state->activate(raw);
}

}  // namespace zehal::metrics
