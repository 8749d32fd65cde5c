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
    IpcPoolFile file;
    if ((flags & kPoolIpc) && params_.linear_clock.hz != 0) {
        // Shared with other processes: the slots, and the facts an opener needs, in a file.
        IpcPoolHeader h;
        h.count = count;
        h.flags = flags;
        h.max_packets = std::max<uint32_t>(1, params_.max_packets);
        h.packets = (flags & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp)) ? h.max_packets : 0;
        h.kernel_timestamp_valid_bits = params_.kernel_timestamp_valid_bits;
        h.timestamp_flags = params_.timestamp_flags;
        h.clock = params_.linear_clock;
        if (ze_result_t r = IpcPoolFile::create(h, &file); r != ZE_RESULT_SUCCESS) return r;
    }
    try {
        auto pool = std::make_shared<HostEventPool>(shared_from_this(), count, flags, std::move(file));
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

HostEventPool::HostEventPool(std::shared_ptr<EventDomain> domain, uint32_t count, uint32_t flags, IpcPoolFile file)
    : domain_(std::move(domain)),
      count_(count),
      flags_(flags),
      file_(std::move(file)),
      events_(std::make_unique<HostEvent[]>(count)) {
    const size_t stride = event_slot_stride(packets_per_event());
    if (!shared()) {
        // Zeroed, then each slot constructed: the packets after it start as zeros too.
        private_slots_ = std::make_unique<unsigned char[]>(stride * count);
        for (uint32_t i = 0; i < count; ++i) new (&private_slots_[i * stride]) EventSlot(false);
    }
    for (uint32_t i = 0; i < count; ++i) {
        events_[i].pool_ = this;
        EventSlot* slot = shared() ? file_.slot(i) : reinterpret_cast<EventSlot*>(&private_slots_[i * stride]);
        events_[i].slot_ = std::launder(slot);
    }
}

HostEventPool::~HostEventPool() {
    // Private slots only: a shared file's slots may still be used by another process.
    if (!shared())
        for (uint32_t i = 0; i < count_; ++i) events_[i].slot_->mu.destroy();
}

uint32_t HostEventPool::packets_per_event() const noexcept {
    if (!(flags_ & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp))) return 0;
    return shared() ? file_.header().packets : std::max<uint32_t>(1, domain_->params().max_packets);
}

ze_result_t HostEventPool::event(uint32_t index, EventRef* out) {
    if (domain_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (index >= count_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // Aliasing constructor: the event shares ownership of its pool.
    *out = EventRef(shared_from_this(), &events_[index]);
    return ZE_RESULT_SUCCESS;
}

ze_result_t HostEventPool::ipc_file(int* fd, uint64_t* bytes) {
    if (!fd || !bytes) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!shared() || file_.fd() < 0) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    *fd = file_.fd();
    *bytes = file_.bytes();
    return ZE_RESULT_SUCCESS;
}

void HostEventPool::mark_lost() noexcept {
    for (uint32_t i = 0; i < count_; ++i) events_[i].mark_lost();
}

ze_result_t open_ipc_event_pool(int fd, std::shared_ptr<EventPool>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    IpcPoolFile file;
    if (ze_result_t r = IpcPoolFile::map(fd, &file); r != ZE_RESULT_SUCCESS) return r;
    const IpcPoolHeader& h = file.header();
    EventDomain::Params params;
    params.timer_hz = h.clock.hz;
    params.kernel_timestamp_valid_bits = h.kernel_timestamp_valid_bits;
    params.timestamp_flags = h.timestamp_flags;
    params.max_packets = h.max_packets;
    params.linear_clock = h.clock;
    const LinearClock clock = h.clock;
    const uint64_t mask = timestamp_max(h.kernel_timestamp_valid_bits);
    const uint32_t count = h.count;
    const uint32_t flags = h.flags;
    try {
        auto domain = std::make_shared<EventDomain>(
            params,
            [clock, mask] {
                const uint64_t host = host_now_ns();
                return TimestampReference{host, clock.ticks_at(host) & mask};
            },
            [clock](uint64_t host_ns) { return clock.ticks_at(host_ns); });
        auto pool = std::make_shared<HostEventPool>(domain, count, flags, std::move(file));
        domain->register_pool(pool);
        *out = std::move(pool);
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

// ---------------------------------------------------------------- HostEvent

EventPool& HostEvent::pool() { return *pool_; }

EventDomain& HostEvent::domain() const noexcept { return *pool_->domain_; }

bool HostEvent::records_timestamps() const noexcept { return pool_->packets_per_event() != 0; }

bool HostEvent::shared() const noexcept { return pool_->shared(); }

ze_result_t HostEvent::query() {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return signalled() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t HostEvent::host_synchronize(uint64_t timeout_ns) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (signalled()) return ZE_RESULT_SUCCESS;
    if (timeout_ns == 0) return ZE_RESULT_NOT_READY;
    WaitWord& state = slot_->state;
    const bool done = wait_until(
        state, [&state] { return state.load() != 0; }, deadline_after(timeout_ns));
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return done && signalled() ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t HostEvent::host_signal() {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
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
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    {
        std::lock_guard lock(slot_->mu);
        slot_->packets = 0;
        slot_->ref = {};
    }
    slot_->state.fetch_and(~EventSlot::kSignalled);
    return ZE_RESULT_SUCCESS;
}

void HostEvent::signal_from_device(std::span<const KernelTimestampResult> packets, const TimestampReference& ref) {
    signal_with(records_timestamps() ? packets : std::span<const KernelTimestampResult>{}, ref);
}

void HostEvent::signal_without_timestamps() { signal_with({}, {}); }

void HostEvent::signal_with(std::span<const KernelTimestampResult> packets, const TimestampReference& ref) {
    if (const uint32_t capacity = pool_->packets_per_event()) {
        std::lock_guard lock(slot_->mu);
        const size_t n = std::min<size_t>(packets.size(), capacity);
        std::copy_n(packets.begin(), n, slot_->ticks());
        slot_->packets = static_cast<uint32_t>(n);
        slot_->ref = ref;
    }
    // WaitWord::fetch_or is seq_cst and wakes sleepers (of every process, for a shared slot);
    // queriers read the timestamps under the slot's lock after seeing the bit.
    slot_->state.fetch_or(EventSlot::kSignalled);
    domain().notify_signal();
}

ze_result_t HostEvent::query_packets(uint32_t* count, KernelTimestampResult* out, bool synchronized) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    const uint32_t flags = pool_->flags_;
    if (!(flags & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp))) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (synchronized && !(flags & kPoolKernelMappedTimestamp)) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (*count != 0 && !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!signalled()) return ZE_RESULT_NOT_READY;
    const EventDomain::Params& p = domain().params();
    std::lock_guard lock(slot_->mu);
    // A shared slot's count is another process's writing: never trusted beyond the capacity.
    const uint32_t packets = std::min(slot_->packets, pool_->packets_per_event());
    if (*count == 0) {
        *count = packets;
        return ZE_RESULT_SUCCESS;
    }
    const uint32_t n = std::min(*count, packets);
    const KernelTimestampResult* ticks = slot_->ticks();
    for (uint32_t i = 0; i < n; ++i)
        out[i] = synchronized ? synchronize_packet(ticks[i], slot_->ref, p.timer_hz, p.kernel_timestamp_valid_bits)
                              : ticks[i];
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
