// Metric streamers: the sampler thread and the ring of counter reports.
#include "metrics/streamer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "hal/timestamps.hpp"
#include "metrics/counter_report.hpp"

namespace zehal::metrics {

ze_result_t Streamer::open(const hal::DeviceRef& device, const MetricGroup* group, uint32_t* sampling_period_ns,
                           uint32_t* notify_every_n_reports, const hal::EventRef& notification,
                           std::shared_ptr<Streamer>* out) {
    if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out || !sampling_period_ns || !notify_every_n_reports) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ze_result_t r = device_alive(*device); r != ZE_RESULT_SUCCESS) return r;
    std::shared_ptr<DeviceMetrics> state;
    if (ze_result_t r = DeviceMetrics::of(device, &state); r != ZE_RESULT_SUCCESS) return r;
    if (!group) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (&group->owner() != state.get() || !group->samples(hal::kSamplingTimeBased))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (notification && (!(notification->pool().flags() & hal::kPoolHostVisible) || !device->owns_event(*notification)))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!device->counter_source()) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (!state->active(group->index())) return ZE_RESULT_NOT_READY;

    const uint32_t period = *sampling_period_ns == 0 ? kDefaultPeriodNs : std::max(*sampling_period_ns, kMinPeriodNs);
    const uint32_t notify = std::clamp(*notify_every_n_reports, 1u, kRingReports);
    if (ze_result_t r = state->claim_streamer(); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = device->counter_source()->use(true); r != ZE_RESULT_SUCCESS) {
        state->release_streamer();
        return r;
    }
    // A constructed streamer owns the claim and the counters' use (its destructor gives
    // both back); a constructor that throws has taken neither.
    Streamer* made = nullptr;
    try {
        made = new Streamer(device, state, state->group(group->index()), period, notify, notification);
    } catch (...) {
        device->counter_source()->use(false);
        state->release_streamer();
        throw;
    }
    std::shared_ptr<Streamer> s(made);
    *sampling_period_ns = period;
    *notify_every_n_reports = notify;
    *out = std::move(s);
    return ZE_RESULT_SUCCESS;
}

Streamer::Streamer(const hal::DeviceRef& device, std::shared_ptr<DeviceMetrics> state, MetricGroupRef group,
                   uint32_t period_ns, uint32_t notify, const hal::EventRef& notification)
    : device_(device),
      source_(device->counter_source()),
      state_(std::move(state)),
      group_(std::move(group)),
      period_ns_(period_ns),
      notify_(notify),
      notification_(notification),
      report_bytes_(metrics::report_size(*group_)),
      timer_hz_(std::max<uint64_t>(device->properties().timer_hz, 1)),
      tick_mask_(hal::timestamp_max(device->properties().timestamp_valid_bits)),
      ring_(kRingReports * report_bytes_),
      values_(group_->metrics().size()) {
    // The first period starts at open, not when the thread first runs.
    tick0_ = source_->now_ticks();
    sampler_ = std::thread([this] { sample_loop(); });
}

Streamer::~Streamer() { close(); }

void Streamer::stop() {
    {
        std::lock_guard lock(mu_);
        quit_ = true;
    }
    cv_.notify_all();
    if (sampler_.joinable()) sampler_.join();
}

void Streamer::sample_loop() {
    // Report k covers the device time (tick0 + k periods, tick0 + k + 1 periods]: the
    // reports follow the device clock, as a sampling unit's would, however late this thread
    // wakes (a late wake-up writes every report that came due meanwhile).
    const uint64_t tick0 = tick0_;
    const unsigned __int128 period_hz = static_cast<unsigned __int128>(period_ns_) * timer_hz_;
    const auto boundary = [&](uint64_t k) {
        return tick0 + static_cast<uint64_t>(static_cast<unsigned __int128>(k) * period_hz / 1'000'000'000u);
    };
    uint64_t written = 0;
    auto next = std::chrono::steady_clock::now();
    std::unique_lock lock(mu_);
    for (;;) {
        // A thread woken late catches up at once, then keeps to the period from there.
        next = std::max(next + std::chrono::nanoseconds(period_ns_), std::chrono::steady_clock::now());
        if (cv_.wait_until(lock, next, [this] { return quit_; })) return;
        // Only periods that ended before the current tick: a completion recorded from now on
        // counts at this tick or later, so no written report misses one.
        const uint64_t elapsed = (source_->now_ticks() - tick0) & tick_mask_;
        const auto due = elapsed ? static_cast<uint64_t>(
                                       (static_cast<unsigned __int128>(elapsed) * 1'000'000'000u - 1) / period_hz)
                                 : 0;
        for (; written < due; ++written)
            push_locked(boundary(written) & tick_mask_, boundary(written + 1) & tick_mask_);
        if (notification_ && count_ >= notify_) {
            lock.unlock();
            if (notification_->query() == ZE_RESULT_NOT_READY) notification_->host_signal();
            lock.lock();
        }
    }
}

void Streamer::push_locked(uint64_t begin_ticks, uint64_t end_ticks) {
    if (source_->window(group_->index(), begin_ticks, end_ticks, values_) != ZE_RESULT_SUCCESS) return;
    const uint32_t sequence = sequence_++;
    if (count_ == kRingReports) {
        ++dropped_;
        dropped_since_read_ = true;
        return;
    }
    const size_t slot = (head_ + count_) % kRingReports;
    write_report(*group_, kReportSample, sequence, begin_ticks, end_ticks, values_, &ring_[slot * report_bytes_]);
    ++count_;
}

ze_result_t Streamer::read(uint32_t max_reports, size_t* size, uint8_t* data) {
    if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::lock_guard lock(mu_);
    if (closed_) {
        *size = 0;
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    const size_t available = std::min<size_t>(count_, max_reports);
    if (*size == 0) {
        *size = available * report_bytes_;
        return dropped_since_read_ ? ZE_RESULT_WARNING_DROPPED_DATA : ZE_RESULT_SUCCESS;
    }
    if (!data) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const size_t n = std::min(available, *size / report_bytes_);
    for (size_t i = 0; i < n; ++i)
        std::memcpy(data + i * report_bytes_, &ring_[((head_ + i) % kRingReports) * report_bytes_], report_bytes_);
    head_ = (head_ + n) % kRingReports;
    count_ -= n;
    *size = n * report_bytes_;
    const bool dropped = dropped_since_read_;
    dropped_since_read_ = false;
    return dropped ? ZE_RESULT_WARNING_DROPPED_DATA : ZE_RESULT_SUCCESS;
}

ze_result_t Streamer::close() {
    {
        std::lock_guard lock(mu_);
        if (closed_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        closed_ = true;
    }
    stop();
    source_->use(false);
    // The slot is free for the next streamer once this one stopped sampling.
    state_->release_streamer();
    return ZE_RESULT_SUCCESS;
}

uint64_t Streamer::dropped() const {
    std::lock_guard lock(mu_);
    return dropped_;
}

}  // namespace zehal::metrics
