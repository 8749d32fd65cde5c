// Metric queries: their pools, their begin and end slots, and their results.
#include "metrics/query.hpp"

#include <span>
#include <vector>

#include "metrics/counter_report.hpp"

namespace zehal::metrics {

ze_result_t QueryPool::create(const hal::DeviceRef& device, const MetricGroup* group, uint32_t count,
                              std::shared_ptr<QueryPool>* out) {
    if (!device || !group) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (ze_result_t r = device_alive(*device); r != ZE_RESULT_SUCCESS) return r;
    std::shared_ptr<DeviceMetrics> state;
    if (ze_result_t r = DeviceMetrics::of(device, &state); r != ZE_RESULT_SUCCESS) return r;
    if (&group->owner() != state.get() || !group->samples(hal::kSamplingEventBased))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    hal::CounterSource* source = device->counter_source();
    if (!source) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (ze_result_t r = source->use(true); r != ZE_RESULT_SUCCESS) return r;
    // The pool owns the counters' use from here (its destructor gives it back).
    try {
        *out = std::make_shared<QueryPool>(device, state->group(group->index()), count);
    } catch (...) {
        source->use(false);
        throw;
    }
    return ZE_RESULT_SUCCESS;
}

QueryPool::QueryPool(const hal::DeviceRef& device, MetricGroupRef group, uint32_t count)
    : device_(device),
      group_(std::move(group)),
      count_(count) {}

QueryPool::~QueryPool() { device_->counter_source()->use(false); }

ze_result_t Query::create(const std::shared_ptr<QueryPool>& pool, uint32_t index, std::shared_ptr<Query>* out) {
    if (!pool) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (index >= pool->count()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const hal::DeviceRef& device = pool->device();
    std::shared_ptr<hal::EventPool> events;
    if (ze_result_t r = device->create_event_pool(1, hal::kPoolHostVisible, &events); r != ZE_RESULT_SUCCESS) return r;
    hal::EventRef end;
    if (ze_result_t r = events->event(0, &end); r != ZE_RESULT_SUCCESS) return r;
    void* slots = nullptr;
    if (ze_result_t r = device->allocate(hal::MemoryKind::host, 2 * sizeof(uint64_t), alignof(uint64_t), 0, 0, &slots);
        r != ZE_RESULT_SUCCESS)
        return r;
    try {
        out->reset(new Query(pool, device, static_cast<uint64_t*>(slots), std::move(end)));
    } catch (...) {
        device->free(slots);
        throw;
    }
    return ZE_RESULT_SUCCESS;
}

Query::Query(std::shared_ptr<QueryPool> pool, hal::DeviceRef device, uint64_t* slots, hal::EventRef end_event)
    : pool_(std::move(pool)),
      device_(std::move(device)),
      slots_(slots),
      end_event_(std::move(end_event)) {
    slots_[0] = slots_[1] = 0;
}

Query::~Query() { device_->free(slots_); }

void Query::began() {
    std::lock_guard lock(mu_);
    began_ = true;
}

void Query::ended() {
    std::lock_guard lock(mu_);
    ended_ = true;
}

ze_result_t Query::reset() {
    std::lock_guard lock(mu_);
    if (ze_result_t r = end_event_->host_reset(); r != ZE_RESULT_SUCCESS) return r;
    began_ = ended_ = false;
    slots_[0] = slots_[1] = 0;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Query::get_data(size_t* size, uint8_t* data) {
    if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::lock_guard lock(mu_);
    const MetricGroup& group = pool_->group();
    // The end's event orders the slots' writes (by the queue) before these reads.
    if (!began_ || !ended_ || end_event_->query() != ZE_RESULT_SUCCESS) {
        *size = 0;
        return ZE_RESULT_NOT_READY;
    }
    const size_t bytes = report_size(group);
    if (*size == 0) {
        *size = bytes;
        return ZE_RESULT_SUCCESS;
    }
    if (!data) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*size < bytes) return ZE_RESULT_ERROR_INVALID_SIZE;
    // A trailing StreamMarker (a group that streamers sample too) is 0 in a query's report.
    std::vector<uint64_t> values(group.metrics().size(), 0);
    const std::span<uint64_t> counted(values.data(), hal::counted_metrics(group.info()));
    hal::CounterSource* source = device_->counter_source();
    if (ze_result_t r = source->window(group.index(), slots_[0], slots_[1], counted); r != ZE_RESULT_SUCCESS) return r;
    write_report(group, kReportQuery, 0, slots_[0], slots_[1], values, data);
    *size = bytes;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::metrics
