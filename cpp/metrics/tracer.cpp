#include "metrics/tracer.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>

#include "common/clock.hpp"

namespace zehal::metrics {
namespace {

constexpr size_t kRecord = sizeof(hal::TraceRecord);
constexpr uint32_t kNoIndex = 0xFFFFFFFFu;
// Records taken from the hardware buffer per drain call: the source's lock is held for a
// copy of at most 128 KiB, and the records are still in the cache when they are fixed up.
constexpr size_t kDrainRecords = 4096;
constexpr auto kMinPause = std::chrono::microseconds(20);
constexpr auto kMaxPause = std::chrono::microseconds(1000);
constexpr uint64_t kMaxSyncIntervalNs = 50'000'000;

hal::TraceRecord control_record(uint16_t kind, uint64_t ticks, uint64_t value) {
    return hal::TraceRecord{kind, static_cast<uint16_t>(kRecord), 0, ticks, value, hal::kRootDevice, 0};
}

// A clock-sync record at least every quarter wrap period of the trace ticks, and at least
// every kMaxSyncIntervalNs, so decoding never has to guess across a wrap.
uint64_t sync_interval_ns(const hal::DeviceProperties& p) {
    if (p.timer_hz == 0 || p.timestamp_valid_bits >= 64) return kMaxSyncIntervalNs;
    const unsigned __int128 wrap_ns = (static_cast<unsigned __int128>(1) << p.timestamp_valid_bits) * 1'000'000'000u /
                                      p.timer_hz;
    return static_cast<uint64_t>(std::clamp<unsigned __int128>(wrap_ns / 4, 1, kMaxSyncIntervalNs));
}

}  // namespace

// Writes whole records into one reservation of the ring, committed all at once when it
// goes out of scope. Positions and capacity are multiples of the record size, so a record
// never straddles the end of the buffer.
struct Tracer::RingWriter {
    RingWriter(SpscByteRing& ring, size_t want) : ring_(ring), regions_(ring.reserve(want)) {}
    ~RingWriter() {
        if (used_) ring_.commit(used_);
    }
    bool put(const hal::TraceRecord& r) {
        if (used_ + kRecord > regions_.size()) return false;
        std::byte* at = used_ < regions_.first.size() ? regions_.first.data() + used_
                                                      : regions_.second.data() + (used_ - regions_.first.size());
        std::memcpy(at, &r, kRecord);
        used_ += kRecord;
        return true;
    }
    size_t used() const { return used_; }
    // The free records that follow the last one written, up to the end of its span.
    std::span<hal::TraceRecord> contiguous() const {
        const bool in_first = used_ < regions_.first.size();
        std::span<std::byte> span = in_first ? regions_.first.subspan(used_)
                                             : regions_.second.subspan(
                                                   std::min(used_ - regions_.first.size(), regions_.second.size()));
        return {reinterpret_cast<hal::TraceRecord*>(span.data()), span.size() / kRecord};
    }
    // Counts `n` records written in place at the start of contiguous().
    void advance(size_t n) { used_ += n * kRecord; }

    SpscByteRing& ring_;
    RingRegions regions_;
    size_t used_ = 0;
};

ze_result_t Tracer::create(const hal::DeviceRef& device, std::span<const MetricGroup* const> groups,
                           uint32_t* notify_every_n_bytes, const Notification& notification,
                           std::shared_ptr<Tracer>* out, const TracerOptions& options) {
    if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (groups.empty()) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (ze_result_t r = device_alive(*device); r != ZE_RESULT_SUCCESS) return r;
    std::shared_ptr<DeviceMetrics> state;
    if (ze_result_t r = DeviceMetrics::of(device, &state); r != ZE_RESULT_SUCCESS) return r;

    std::vector<uint32_t> indices;
    for (const MetricGroup* g : groups) {
        if (!g) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (&g->owner() != state.get() || !g->tracer_based()) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (std::find(indices.begin(), indices.end(), g->index()) != indices.end())
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        indices.push_back(g->index());
    }
    if (ze_result_t r = check_notification(*device, notification); r != ZE_RESULT_SUCCESS) return r;
    const size_t ring_bytes = std::bit_ceil(std::max<size_t>(options.ring_bytes, 1));
    if (options.ring_bytes < 2 * kRecord) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!device->trace_source()) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    for (const MetricGroup* g : groups)
        if (!state->active(g->index())) return ZE_RESULT_NOT_READY;

    // Whole records, at most the ring, never 0. Rounded up so the event never fires
    // before the amount asked for is there.
    const uint64_t asked = notify_every_n_bytes && *notify_every_n_bytes ? *notify_every_n_bytes : kDefaultNotifyBytes;
    const uint64_t rounded = (asked + kRecord - 1) / kRecord * kRecord;
    const uint32_t notify = static_cast<uint32_t>(std::min<uint64_t>({rounded, ring_bytes, 0xFFFFFFE0u}));

    std::vector<MetricRef> metrics;
    for (const MetricGroup* g : groups)
        for (const Metric& m : g->metrics()) metrics.push_back(state->metric(m));

    if (ze_result_t r = state->claim_tracer(); r != ZE_RESULT_SUCCESS) return r;
    // A constructed tracer owns the claim (its destructor gives it back, also when the
    // shared_ptr below cannot be made); a constructor that throws has not taken it yet.
    Tracer* made = nullptr;
    try {
        made = new Tracer(device, state, std::move(indices), std::move(metrics), notify, notification.event,
                          ring_bytes);
    } catch (...) {
        state->release_tracer();
        throw;
    }
    std::shared_ptr<Tracer> t(made);
    if (notify_every_n_bytes) *notify_every_n_bytes = notify;
    *out = std::move(t);
    return ZE_RESULT_SUCCESS;
}

Tracer::Tracer(const hal::DeviceRef& device, std::shared_ptr<DeviceMetrics> state, std::vector<uint32_t> groups,
               std::vector<MetricRef> metrics, uint32_t notify_bytes, hal::EventRef notification, size_t ring_bytes)
    : device_(device),
      state_(std::move(state)),
      source_(device->trace_source()),
      groups_(std::move(groups)),
      metrics_(std::move(metrics)),
      notify_bytes_(notify_bytes),
      notification_(std::move(notification)),
      sync_interval_ns_(sync_interval_ns(device->properties())),
      ring_(ring_bytes),
      source_records_(std::max<size_t>(source_->capacity() / kRecord, 4)) {
    uint32_t max_id = 0;
    for (const MetricRef& m : metrics_) max_id = std::max(max_id, m->device_id());
    index_of_.assign(static_cast<size_t>(max_id) + 1, kNoIndex);
    for (uint32_t i = 0; i < metrics_.size(); ++i) index_of_[metrics_[i]->device_id()] = i;
    thread_ = std::thread([this] { run(); });
}

Tracer::~Tracer() {
    if (closed_.load(std::memory_order_acquire)) return;
    {
        std::lock_guard lock(mu_);
        if (desired_) {
            desired_ = false;
            ++requested_;
        }
    }
    stop_thread();
    state_->release_tracer();
}

void Tracer::stop_thread() {
    {
        std::lock_guard lock(mu_);
        quit_ = true;
    }
    wake_.notify_all();
    done_.notify_all();  // readers waiting for a pass read what there is
    if (thread_.joinable()) thread_.join();
}

ze_result_t Tracer::destroy() {
    {
        std::lock_guard lock(mu_);
        if (closed_.load(std::memory_order_acquire) || quit_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (desired_) return ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE;
        quit_ = true;
    }
    // The drain thread applies a pending asynchronous disable before it leaves.
    stop_thread();
    {
        // Readers in flight finish before the tracer reads as closed.
        std::lock_guard lock(read_mu_);
        closed_.store(true, std::memory_order_release);
    }
    state_->release_tracer();
    return ZE_RESULT_SUCCESS;
}

ze_result_t Tracer::enable(bool synchronous) { return request(true, synchronous); }

ze_result_t Tracer::disable(bool synchronous) { return request(false, synchronous); }

ze_result_t Tracer::request(bool enable, bool synchronous) {
    std::unique_lock lock(mu_);
    if (quit_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    // Already there and settled (a failed enable resets desired_, so this is the state).
    if (desired_ == enable && applied_ == requested_) return ZE_RESULT_SUCCESS;
    desired_ = enable;
    const uint64_t generation = ++requested_;
    wake_.notify_all();
    if (!synchronous) return ZE_RESULT_SUCCESS;
    done_.wait(lock, [&] { return applied_ >= generation; });
    return applied_ == generation ? applied_result_ : ZE_RESULT_SUCCESS;
}

bool Tracer::enabled() const {
    std::lock_guard lock(mu_);
    return desired_ && !quit_;
}

size_t Tracer::available() const {
    if (closed()) return 0;
    const size_t n = ring_.size();
    return n - n % kRecord;
}

void Tracer::catch_up() {
    std::unique_lock lock(mu_);
    if (quit_) return;
    const uint64_t ticket = ++passes_asked_;
    wake_.notify_all();
    done_.wait(lock, [&] { return passes_done_ >= ticket || quit_; });
}

ze_result_t Tracer::read(size_t* size, void* data) {
    if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::lock_guard lock(read_mu_);
    if (closed_.load(std::memory_order_acquire)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    // Requests made before this call are applied and the hardware buffer drained into the
    // ring, so that a read after a command completed finds its records, and a read after
    // an asynchronous disable finds the tracer disabled (the marker, then NOT_READY).
    catch_up();
    // Acquire, state first: the drain thread publishes the state after everything that
    // state implies is in the ring or counted as pending.
    const int state = state_now_.load(std::memory_order_acquire);
    // Acquire, pending before the ring: the drain thread commits records to the ring
    // before it lowers pending_, so a pending_ of 0 means the ring shows them.
    const size_t pending = pending_.load(std::memory_order_acquire);
    const size_t ready = ring_.size();
    const size_t available = ready - ready % kRecord;
    const bool drained = state == kDisabled && available == 0 && pending == 0;
    if (state == kNever) {
        *size = 0;
        return ZE_RESULT_NOT_READY;
    }
    // Acquire: pairs with the drain thread's release when it counts a loss.
    const uint64_t lost = dropped_.load(std::memory_order_acquire);
    if (*size == 0) {
        *size = available;
        if (drained) return ZE_RESULT_NOT_READY;
        return lost != dropped_seen_ ? ZE_RESULT_WARNING_DROPPED_DATA : ZE_RESULT_SUCCESS;
    }
    if (!data) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *size = ring_.pop(data, *size, kRecord);
    if (drained) return ZE_RESULT_NOT_READY;
    if (lost != dropped_seen_) {
        dropped_seen_ = lost;
        return ZE_RESULT_WARNING_DROPPED_DATA;
    }
    return ZE_RESULT_SUCCESS;
}

// ---- the drain thread ----

void Tracer::run() {
    std::unique_lock lock(mu_);
    auto pause = kMinPause;
    for (;;) {
        if (applied_ != requested_) {
            const bool want = desired_;
            const uint64_t generation = requested_;
            lock.unlock();
            const ze_result_t r = apply(want);
            lock.lock();
            applied_ = generation;
            applied_result_ = r;
            // A failed enable leaves the tracer disabled.
            if (r != ZE_RESULT_SUCCESS && want && requested_ == generation) desired_ = false;
            done_.notify_all();
            continue;
        }
        if (quit_) break;
        const bool on = state_now_.load(std::memory_order_relaxed) == kEnabled;
        // The readers that asked before this pass starts are answered when it ends.
        const uint64_t answers = passes_asked_;
        lock.unlock();
        const uint64_t started = host_now_ns();
        const size_t moved = on ? pump() : 0;
        flush();
        if (on) maybe_sync(false);
        maybe_notify();
        lock.lock();
        if (answers != passes_done_) {
            passes_done_ = answers;
            done_.notify_all();
        }
        auto woken = [&] { return quit_ || applied_ != requested_ || passes_asked_ != passes_done_; };
        if (!on && control_.empty()) {
            wake_.wait(lock, woken);
            continue;
        }
        // pump() took everything there was. Records flowing: sleep while the hardware
        // buffer fills to a quarter at the rate just seen, so each wake-up moves a large
        // batch and the buffer never comes near full. Nothing: back off.
        if (moved && ring_full_) {
            pause = kMinPause;  // the reader is the limit: back soon, when it has made room
        } else if (moved) {
            const uint64_t max_ns = std::chrono::nanoseconds(kMaxPause).count();
            const uint64_t since = std::clamp<uint64_t>(started - std::exchange(last_pump_ns_, started), 1, max_ns);
            const double quarter_ns = static_cast<double>(source_records_ / 4) * static_cast<double>(since) /
                                      static_cast<double>(moved);
            pause = std::clamp(std::chrono::microseconds(static_cast<int64_t>(quarter_ns / 1000)), kMinPause,
                               kMaxPause);
        }
        if (!moved || ring_full_) last_pump_ns_ = started;
        wake_.wait_for(lock, pause, woken);
        if (!moved) pause = std::min(pause * 2, kMaxPause);
    }
    lock.unlock();
    if (state_now_.load(std::memory_order_relaxed) == kEnabled) apply(false);
}

ze_result_t Tracer::apply(bool enable) {
    const int now = state_now_.load(std::memory_order_relaxed);
    if (enable) {
        if (now == kEnabled) return ZE_RESULT_SUCCESS;
        uint64_t host = 0, ticks = 0;
        if (ze_result_t r = device_->global_timestamps(&host, &ticks); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = source_->start(groups_); r != ZE_RESULT_SUCCESS) return r;
        last_ticks_ = ticks;
        last_sync_ns_ = host;
        taken_ = 0;  // start() zeroed produced()
        queue(control_record(hal::kRecordClockSync, ticks, host));
        queue(control_record(hal::kRecordEnable, ticks, 0));
        flush();
        // Release: what enabling queued is visible to a reader that sees kEnabled.
        state_now_.store(kEnabled, std::memory_order_release);
        return ZE_RESULT_SUCCESS;
    }
    if (now != kEnabled) return ZE_RESULT_SUCCESS;
    source_->stop();
    // Everything the hardware buffer still holds, losses included, goes in before the
    // marker; what finds no room in the ring is counted as lost there.
    while (pump()) {
    }
    discard_source();
    maybe_sync(true);
    queue(control_record(hal::kRecordDisable, last_ticks_, 0));
    flush();
    // Release: the drained records and the marker are in the ring or counted in pending_
    // before a reader can see kDisabled.
    state_now_.store(kDisabled, std::memory_order_release);
    maybe_notify();
    return ZE_RESULT_SUCCESS;
}

size_t Tracer::pump() {
    uint64_t lost_total = 0;
    size_t moved = 0;
    bool full = false;
    // Records go from the hardware buffer straight into the ring, then are fixed up where
    // they are: one copy, and no work per record but the fix-up. Each chunk is committed
    // on its own, so the reader sees records while the drain goes on.
    for (;;) {
        RingWriter w(ring_, kDrainRecords * kRecord);
        flush(w);
        const std::span<hal::TraceRecord> free = w.contiguous();
        if (!control_.empty() || free.empty()) {
            full = true;
            break;
        }
        const size_t room = std::min(free.size(), kDrainRecords);
        uint64_t lost = 0;
        size_t n = source_->drain(free.data(), room * kRecord, &lost) / kRecord;
        taken_ += n + lost;
        size_t marker = 0;
        if (lost) {
            // Rare: the records move one slot up, behind the record of the gap; one that
            // no longer fits waits in the queue of control records.
            if (n == free.size()) {
                hal::TraceRecord last = free[n - 1];
                --n;
                lost_total += remap(last);
                queue(last);
            }
            std::memmove(free.data() + 1, free.data(), n * kRecord);
            free[0] = control_record(hal::kRecordDropped, last_ticks_, lost);
            lost_total += lost;
            marker = 1;
        }
        lost_total += fix_up(free.subspan(0, marker + n));
        w.advance(marker + n);
        moved += marker + n;
        if (n < room) break;
    }
    if (lost_total) {
        // Release, after the commit of the records of the gap: a reader that sees the new
        // count finds them in the ring (or queued, as pending_ says).
        dropped_.store(dropped_.load(std::memory_order_relaxed) + lost_total, std::memory_order_release);
    }
    // No room in the ring: records wait in the hardware buffer (the reader may be about
    // to read) until it is three quarters full; then the drain thread takes them and
    // drops them at the ring, so a slow reader never makes the device lose its own
    // records. The fill is an estimate: produced() less what drains took or lost.
    ring_full_ = full;
    if (full) {
        const uint64_t produced = source_->produced();
        const uint64_t held = produced > taken_ ? produced - taken_ : 0;
        if (held >= source_records_ / 4 * 3) discard_source();
    }
    publish_pending();
    return moved;
}

uint64_t Tracer::remap(hal::TraceRecord& r) const {
    if (r.kind != hal::kRecordSample && r.kind != hal::kRecordExportWrite) return 0;
    const uint32_t index = r.metric < index_of_.size() ? index_of_[r.metric] : kNoIndex;
    if (index != kNoIndex) {
        r.metric = index;
        return 0;
    }
    // A record of no metric of this tracer becomes the record of its own loss.
    r = control_record(hal::kRecordDropped, r.ticks, 1);
    return 1;
}

uint64_t Tracer::fix_up(std::span<hal::TraceRecord> records) {
    uint64_t lost = 0;
    for (hal::TraceRecord& r : records) {
        lost += remap(r);
        r.sequence = sequence_++;
    }
    if (!records.empty()) last_ticks_ = records.back().ticks;
    return lost;
}

void Tracer::discard_source() {
    hal::TraceRecord scrap[256];
    for (;;) {
        uint64_t lost = 0;
        const size_t n = source_->drain(scrap, sizeof scrap, &lost) / kRecord;
        if (n + lost == 0) return;
        taken_ += n + lost;
        note_lost(n + lost);
    }
}

void Tracer::flush(RingWriter& w) {
    while (!control_.empty()) {
        hal::TraceRecord r = control_.front();
        r.sequence = sequence_;
        if (!w.put(r)) break;
        ++sequence_;
        control_.pop_front();
    }
}

void Tracer::flush() {
    if (!control_.empty()) {
        RingWriter w(ring_, control_.size() * kRecord);
        flush(w);
    }
    publish_pending();
}

void Tracer::publish_pending() {
    // Release, after the commit of the records that left the queue: see read().
    pending_.store(control_.size(), std::memory_order_release);
}

void Tracer::queue(const hal::TraceRecord& r) { control_.push_back(r); }

void Tracer::note_lost(uint64_t records) {
    // Consecutive losses are one gap: one kind-4 record counts them all.
    if (!control_.empty() && control_.back().kind == hal::kRecordDropped)
        control_.back().value += records;
    else
        control_.push_back(control_record(hal::kRecordDropped, last_ticks_, records));
    // Release: a reader that sees the new count sees the gap queued or in the ring.
    dropped_.store(dropped_.load(std::memory_order_relaxed) + records, std::memory_order_release);
}

void Tracer::maybe_sync(bool force) {
    const uint64_t now = host_now_ns();
    if (!force && now - last_sync_ns_ < sync_interval_ns_) return;
    uint64_t host = 0, ticks = 0;
    if (device_->global_timestamps(&host, &ticks) != ZE_RESULT_SUCCESS) return;
    last_sync_ns_ = host;
    last_ticks_ = ticks;
    queue(control_record(hal::kRecordClockSync, ticks, host));
    flush();
}

void Tracer::maybe_notify() {
    if (!notification_ || ring_.size() < notify_bytes_) return;
    if (notification_->query() == ZE_RESULT_NOT_READY) notification_->host_signal();
}

}  // namespace zehal::metrics
