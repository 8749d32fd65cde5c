// Metric streamers: the sampler thread and the ring of counter reports.
#include "metrics/streamer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "hal/timestamps.hpp"
#include "metrics/counter_report.hpp"

namespace zehal::metrics {

ze_result_t Streamer::open(const hal::DeviceRef& device, const MetricGroup* group, uint32_t* sampling_period_ns,
                           uint32_t* notify_every_n_reports, const Notification& notification,
                           std::shared_ptr<Streamer>* out) {
    if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out || !sampling_period_ns || !notify_every_n_reports) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ze_result_t r = device_alive(*device); r != ZE_RESULT_SUCCESS) return r;
    std::shared_ptr<DeviceMetrics> state;
    if (ze_result_t r = DeviceMetrics::of(device, &state); r != ZE_RESULT_SUCCESS) return r;
    if (!group) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (&group->owner() != state.get() || !group->samples(hal::kSamplingTimeBased))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (ze_result_t r = check_notification(*device, notification); r != ZE_RESULT_SUCCESS) return r;
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
        made = new Streamer(device, state, state->group(group->index()), period, notify, notification.event);
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
      counted_(hal::counted_metrics(group_->info())),
      has_marker_(hal::has_stream_marker(group_->info())),
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
    auto next = std::chrono::steady_clock::now();
    std::unique_lock lock(mu_);
    for (;;) {
        // A thread woken late catches up at once, then keeps to the period from there.
        next = std::max(next + std::chrono::nanoseconds(period_ns_), std::chrono::steady_clock::now());
        if (cv_.wait_until(lock, next, [this] { return quit_; })) return;
        write_due_locked((source_->now_ticks() - tick0_) & tick_mask_);
        if (notification_ && count_ >= notify_) {
            lock.unlock();
            if (notification_->query() == ZE_RESULT_NOT_READY) notification_->host_signal();
            lock.lock();
        }
    }
}

void Streamer::write_due_locked(uint64_t elapsed, uint64_t limit) {
    // Period k covers the device time (k periods, k + 1 periods] since open: the reports
    // follow the device clock, as a sampling unit's would, however late this thread wakes (a
    // late wake-up writes every report that came due meanwhile).
    const unsigned __int128 period_hz = static_cast<unsigned __int128>(period_ns_) * timer_hz_;
    const auto boundary = [&](uint64_t k) {
        return static_cast<uint64_t>(static_cast<unsigned __int128>(k) * period_hz / 1'000'000'000u);
    };
    // Only periods that ended before the current tick: a completion recorded from now on
    // counts at this tick or later, so no written report misses one.
    const auto ended = elapsed ? static_cast<uint64_t>((static_cast<unsigned __int128>(elapsed) * 1'000'000'000u - 1) /
                                                       period_hz)
                               : 0;
    const uint64_t due = written_ + std::min(ended - std::min(ended, written_), limit);
    // Every marker that landed by now: a report ending at one has ended too (a queue keeps its
    // commands' completions off the ticks of its timestamps while the counters are read). Only
    // those of the periods written when the limit stops short of the period under way.
    const std::vector<Landed> landed = take_landed_locked(due < ended ? boundary(due) : elapsed);
    size_t next = 0;
    for (; written_ < due; ++written_) {
        const uint64_t end = boundary(written_ + 1);
        bool marker_at_end = false;
        // Each marker of the period ends a report; markers on one tick (or whose timestamp
        // landed after the report holding it was written) end reports of an empty window.
        for (; next < landed.size() && landed[next].at <= end; ++next) {
            const uint64_t at = std::max(landed[next].at, cursor_);
            push_locked(cursor_, at, landed[next].value);
            cursor_ = at;
            marker_at_end = at == end;
        }
        if (!marker_at_end) push_locked(cursor_, end, 0);
        cursor_ = end;
    }
    // The markers of the period under way end their reports now; the period's last report
    // starts at the last of them.
    for (; next < landed.size(); ++next) {
        const uint64_t at = std::max(landed[next].at, cursor_);
        push_locked(cursor_, at, landed[next].value);
        cursor_ = at;
    }
}

std::vector<Streamer::Landed> Streamer::take_landed_locked(uint64_t until) {
    std::vector<Landed> landed;
    size_t kept = 0;
    for (size_t i = 0; i < markers_.size(); ++i) {
        const Marker m = markers_[i];
        const MarkerSlot slot = slot_locked(m.slot);
        // The event orders the queue's write of the slot before this read (as for a query's end).
        if (slot.landed->query() != ZE_RESULT_SUCCESS) {
            markers_[kept++] = m;
            continue;
        }
        // Counted from the end of the last report written: a timestamp from before it (its
        // command ran while that report was being written) ends the next report.
        const uint64_t ahead = (*slot.ticks - tick0_ - cursor_) & tick_mask_;
        const uint64_t at = cursor_ + (ahead > tick_mask_ / 2 ? 0 : ahead);
        if (at > until) {
            markers_[kept++] = m;
            continue;
        }
        landed.push_back({at, m.value});
        // The command is done with the slot: it serves the next marker. A reset that fails
        // (a lost device) leaves the slot out of use.
        if (slot.landed->host_reset() == ZE_RESULT_SUCCESS) free_.push_back(m.slot);
    }
    markers_.resize(kept);
    // In tick order; markers on one tick in the order they were appended.
    std::stable_sort(landed.begin(), landed.end(), [](const Landed& a, const Landed& b) { return a.at < b.at; });
    return landed;
}

void Streamer::push_locked(uint64_t begin, uint64_t end, uint32_t marker) {
    const uint64_t begin_ticks = (tick0_ + begin) & tick_mask_;
    const uint64_t end_ticks = (tick0_ + end) & tick_mask_;
    const std::span<uint64_t> counted(values_.data(), counted_);
    if (source_->window(group_->index(), begin_ticks, end_ticks, counted) != ZE_RESULT_SUCCESS) return;
    if (has_marker_) values_.back() = marker;
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

ze_result_t Streamer::can_mark() const {
    if (!has_marker_) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    std::lock_guard lock(mu_);
    return closed_ ? ZE_RESULT_ERROR_INVALID_NULL_HANDLE : ZE_RESULT_SUCCESS;
}

Streamer::MarkerSlot Streamer::slot_locked(size_t index) const {
    const Chunk& chunk = chunks_[index / kSlotsPerChunk];
    const auto place = static_cast<uint32_t>(index % kSlotsPerChunk);
    MarkerSlot slot;
    slot.ticks = chunk.ticks + place;
    // Never fails: the index is inside the pool.
    static_cast<void>(chunk.events->event(place, &slot.landed));
    return slot;
}

ze_result_t Streamer::add_marker(uint32_t value, MarkerSlot* slot) {
    if (!slot) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!has_marker_) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    std::lock_guard lock(mu_);
    if (closed_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    const hal::DeviceRef device = device_.lock();
    if (!device) return ZE_RESULT_ERROR_DEVICE_LOST;
    // Room first, so that nothing throws once the memory is allocated.
    markers_.reserve(markers_.size() + 1);
    if (free_.empty()) {
        // free_ holds every slot at most: it never grows when markers give theirs back.
        chunks_.reserve(chunks_.size() + 1);
        free_.reserve((chunks_.size() + 1) * kSlotsPerChunk);
        std::shared_ptr<hal::EventPool> events;
        if (ze_result_t r = device->create_event_pool(kSlotsPerChunk, hal::kPoolHostVisible, &events);
            r != ZE_RESULT_SUCCESS)
            return r;
        void* ticks = nullptr;
        if (ze_result_t r = device->allocate(hal::MemoryKind::host, kSlotsPerChunk * sizeof(uint64_t),
                                             alignof(uint64_t), 0, 0, &ticks);
            r != ZE_RESULT_SUCCESS)
            return r;
        chunks_.push_back({static_cast<uint64_t*>(ticks), std::move(events)});
        // Handed out from the chunk's start.
        for (size_t i = kSlotsPerChunk; i-- > 0;) free_.push_back((chunks_.size() - 1) * kSlotsPerChunk + i);
    }
    const size_t index = free_.back();
    free_.pop_back();
    markers_.push_back({value, index});
    *slot = slot_locked(index);
    return ZE_RESULT_SUCCESS;
}

void Streamer::drop_marker(const MarkerSlot& slot) {
    std::lock_guard lock(mu_);
    const auto it = std::find_if(markers_.begin(), markers_.end(),
                                 [&](const Marker& m) { return slot_locked(m.slot).ticks == slot.ticks; });
    if (it == markers_.end()) return;
    free_.push_back(it->slot);
    markers_.erase(it);
}

void Streamer::free_slots() {
    std::vector<Chunk> chunks;
    {
        std::lock_guard lock(mu_);
        chunks.swap(chunks_);
        markers_.clear();
        free_.clear();
    }
    // The device's free waits for queued commands that still write into a chunk.
    if (const hal::DeviceRef device = device_.lock())
        for (const Chunk& chunk : chunks) static_cast<void>(device->free(chunk.ticks));
}

ze_result_t Streamer::read(uint32_t max_reports, size_t* size, uint8_t* data) {
    if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::lock_guard lock(mu_);
    if (closed_) {
        *size = 0;
        return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    // With markers pending, catches up however late the sampler wakes: the reports that ended
    // by now, as many as this read can take (bounded, so that a reader never holds the lock for
    // long). Without, the sampler writes every report, readers only take them.
    const size_t room = *size ? *size / report_bytes_ : kRingReports;
    const size_t wanted = std::min<size_t>({max_reports, room, kRingReports});
    if (!markers_.empty() && count_ < wanted)
        write_due_locked((source_->now_ticks() - tick0_) & tick_mask_, wanted - count_);
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
    // Last: this waits for marker commands still queued.
    free_slots();
    return ZE_RESULT_SUCCESS;
}

uint64_t Streamer::dropped() const {
    std::lock_guard lock(mu_);
    return dropped_;
}

}  // namespace zehal::metrics
