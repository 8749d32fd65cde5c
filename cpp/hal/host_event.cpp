#include "hal/host_event.hpp"

#include <algorithm>
#include <new>

#include "common/clock.hpp"

namespace zehal::hal {

// ---------------------------------------------------------------- EventDomain

EventDomain::EventDomain(const Params& params, Sampler sampler, Clock clock)
    : params_(params),
      sampler_(std::move(sampler)),
      clock_(std::move(clock)),
      half_wrap_ns_(wrap_period_ns(params.timer_hz, params.kernel_timestamp_valid_bits) / 2) {}

ze_result_t EventDomain::create_pool(uint32_t count, uint32_t flags, std::shared_ptr<EventPool>* out) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (flags & ~kPoolValidFlags) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (count > kMaxEventsPerPool) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if ((flags & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp)) && !(params_.timestamp_flags & kTimestampKernel))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if ((flags & kPoolKernelMappedTimestamp) && !(params_.timestamp_flags & kTimestampSynchronized))
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    try {
        auto pool = std::make_shared<HostEventPool>(shared_from_this(), count, flags);
        register_pool(pool);
        *out = std::move(pool);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

void EventDomain::register_pool(const std::shared_ptr<HostEventPool>& pool) {
    std::lock_guard lock(pools_mu_);
    if (pools_.size() >= prune_at_) {
        std::erase_if(pools_, [](const std::weak_ptr<HostEventPool>& p) { return p.expired(); });
        prune_at_ = std::max<size_t>(16, pools_.size() * 2);
    }
    pools_.push_back(pool);
}

bool EventDomain::lose() {
    // seq_cst: ordered before the event bits set below and the listener's wake-ups.
    if (lost_.exchange(true, std::memory_order_seq_cst)) return false;
    {
        std::lock_guard lock(pools_mu_);
        for (const auto& weak : pools_)
            if (auto pool = weak.lock()) pool->mark_lost();
    }
    std::lock_guard lock(listener_mu_);
    if (listener_) listener_();
    return true;
}

TimestampReference EventDomain::reference() {
    const uint64_t now = host_now_ns();
    std::lock_guard lock(ref_mu_);
    if (!ref_valid_ || now > ref_.host_ns + half_wrap_ns_) {
        ref_ = sampler_();
        ref_valid_ = true;
    }
    return ref_;
}

void EventDomain::set_listener(std::function<void()> listener) {
    std::lock_guard lock(listener_mu_);
    listener_ = std::move(listener);
}

void EventDomain::add_watcher() noexcept {
    // seq_cst, then the watcher's seq_cst loads of event states (HostEvent::signalled); the
    // signaller does a seq_cst store of the state, then a seq_cst load of this count. In the
    // single total order one side sees the other: no signal falls between re-check and sleep.
    watchers_.fetch_add(1, std::memory_order_seq_cst);
}

void EventDomain::remove_watcher() noexcept {
    // Relaxed: a late extra listener call is harmless.
    watchers_.fetch_sub(1, std::memory_order_relaxed);
}

void EventDomain::notify_signal() {
    // seq_cst: see add_watcher (the event state was stored, seq_cst, before this load).
    if (watchers_.load(std::memory_order_seq_cst) == 0) return;
    std::lock_guard lock(listener_mu_);
    if (listener_) listener_();
}

// ---------------------------------------------------------------- HostEventPool

HostEventPool::HostEventPool(std::shared_ptr<EventDomain> domain, uint32_t count, uint32_t flags)
    : domain_(std::move(domain)),
      count_(count),
      flags_(flags),
      events_(std::make_unique<HostEvent[]>(count)) {
    const bool timestamps = flags & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp);
    for (uint32_t i = 0; i < count; ++i) {
        events_[i].pool_ = this;
        if (timestamps) events_[i].ticks_ = std::make_unique<KernelTimestampResult[]>(domain_->params().max_packets);
    }
}

ze_result_t HostEventPool::event(uint32_t index, EventRef* out) {
    if (domain_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (index >= count_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // Aliasing constructor: the event shares ownership of its pool.
    *out = EventRef(shared_from_this(), &events_[index]);
    return ZE_RESULT_SUCCESS;
}

void HostEventPool::mark_lost() noexcept {
    for (uint32_t i = 0; i < count_; ++i) events_[i].mark_lost();
}

// ---------------------------------------------------------------- HostEvent

EventPool& HostEvent::pool() { return *pool_; }

EventDomain& HostEvent::domain() const noexcept { return *pool_->domain_; }

bool HostEvent::records_timestamps() const noexcept { return ticks_ != nullptr; }

ze_result_t HostEvent::query() {
    if (domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return signalled() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t HostEvent::host_synchronize(uint64_t timeout_ns) {
    if (domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (signalled()) return ZE_RESULT_SUCCESS;
    if (timeout_ns == 0) return ZE_RESULT_NOT_READY;
    const bool done = wait_until(
        state_, [this] { return state_.load() != 0; }, deadline_after(timeout_ns));
    if (domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return done && signalled() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t HostEvent::host_signal() {
    if (domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (records_timestamps()) {
        // One packet at the instant of the signal, with a reference pair sampled with it.
        const TimestampReference now = domain().sample();
        const KernelTimestampResult packet{now.ticks, now.ticks, now.ticks, now.ticks};
        signal_with({&packet, 1}, now);
    } else {
        signal_with({}, {});
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t HostEvent::host_reset() {
    if (domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    {
        std::lock_guard lock(ts_mu_);
        packets_ = 0;
        ref_ = {};
    }
    state_.fetch_and(~kSignalled);
    return ZE_RESULT_SUCCESS;
}

void HostEvent::signal_from_device(std::span<const KernelTimestampResult> packets, const TimestampReference& ref) {
    signal_with(records_timestamps() ? packets : std::span<const KernelTimestampResult>{}, ref);
}

void HostEvent::signal_without_timestamps() { signal_with({}, {}); }

void HostEvent::signal_with(std::span<const KernelTimestampResult> packets, const TimestampReference& ref) {
    if (ticks_) {
        std::lock_guard lock(ts_mu_);
        const size_t n = std::min<size_t>(packets.size(), pool_->domain_->params().max_packets);
        std::copy_n(packets.begin(), n, ticks_.get());
        packets_ = static_cast<uint32_t>(n);
        ref_ = ref;
    }
    // WaitWord::fetch_or is seq_cst and wakes sleepers; queriers read the timestamps under
    // ts_mu_ after seeing the bit.
    state_.fetch_or(kSignalled);
    domain().notify_signal();
}

ze_result_t HostEvent::query_packets(uint32_t* count, KernelTimestampResult* out, bool synchronized) {
    if (domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const uint32_t flags = pool_->flags_;
    if (!(flags & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp))) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (synchronized && !(flags & kPoolKernelMappedTimestamp)) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (*count != 0 && !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!signalled()) return ZE_RESULT_NOT_READY;
    const EventDomain::Params& p = domain().params();
    std::lock_guard lock(ts_mu_);
    if (*count == 0) {
        *count = packets_;
        return ZE_RESULT_SUCCESS;
    }
    const uint32_t n = std::min(*count, packets_);
    for (uint32_t i = 0; i < n; ++i)
        out[i] = synchronized ? synchronize_packet(ticks_[i], ref_, p.timer_hz, p.kernel_timestamp_valid_bits)
                              : ticks_[i];
    *count = n;
    return ZE_RESULT_SUCCESS;
}

ze_result_t HostEvent::query_kernel_timestamps(uint32_t* count, KernelTimestampResult* out) {
    return query_packets(count, out, false);
}

ze_result_t HostEvent::query_synchronized_timestamps(uint32_t* count, KernelTimestampResult* out) {
    return query_packets(count, out, true);
}

}  // namespace zehal::hal
