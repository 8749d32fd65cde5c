// Events kept in host memory: a generic EventPool/Event for backends whose commands are
// completed by host threads (the sim engines) or by host-side callbacks. Each event's state
// (an EventSlot) holds its signal word (a futex), and per packet the kernel timestamps of
// the command that signalled it, with the reference pair of its submission for synchronized
// timestamps. A pool made with kPoolIpc on a device with a linear clock keeps its slots in a
// file that other processes open (open_ipc_event_pool): the same events, seen by all.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "common/wait_word.hpp"
#include "hal/event.hpp"
#include "hal/event_slot.hpp"
#include "hal/ipc_event_file.hpp"
#include "hal/timestamps.hpp"
#include "hal/types.hpp"

namespace zehal::hal {

class HostEventPool;

// What a device shares with its event pools. Pools keep it alive, so events stay safe to
// use after their device is gone. Always owned by a shared_ptr.
class EventDomain : public std::enable_shared_from_this<EventDomain> {
public:
    // Fixed facts of the device.
    struct Params {
        uint64_t timer_hz = 0;                      // device clock frequency
        uint32_t kernel_timestamp_valid_bits = 64;  // valid bits of kernel timestamps
        uint32_t timestamp_flags = 0;               // TimestampCapability bits of the device
        uint32_t max_packets = 1;                   // packets one command may record
        // The device clock when it is linear in host time (hz 0: not known). Pools made with
        // kPoolIpc are shared with other processes only on a device that gives it: an opener
        // reads the device's ticks with it.
        LinearClock linear_clock{};
    };
    // Samples (host ns of CLOCK_MONOTONIC_RAW, device ticks masked to the kernel timestamp
    // valid bits) together. Called from any thread.
    using Sampler = std::function<TimestampReference()>;
    // The device's ticks (unmasked) at host instant `host_ns` (CLOCK_MONOTONIC_RAW). Called
    // from any thread, also after the device is gone (it must not refer to the device).
    using Clock = std::function<uint64_t(uint64_t host_ns)>;

    // `clock` may be empty: then only the device's own commands timestamp its events.
    EventDomain(const Params& params, Sampler sampler, Clock clock = {});

    const Params& params() const noexcept { return params_; }
    // True when commands of another device may timestamp this domain's events (a clock was
    // given): they read its ticks with ticks_at.
    bool has_clock() const noexcept { return static_cast<bool>(clock_); }
    // The device's ticks (unmasked) at host instant `host_ns`; has_clock() must hold.
    uint64_t ticks_at(uint64_t host_ns) const { return clock_(host_ns); }
    // Half the wrap period of kernel timestamps, in ns: the age at which reference() re-samples.
    uint64_t half_wrap_ns() const noexcept { return half_wrap_ns_; }

    // A pool of `count` events with EventPoolFlag `flags`: INVALID_NULL_POINTER, INVALID_SIZE
    // for 0 events, UNSUPPORTED_SIZE above kMaxEventsPerPool, INVALID_ENUMERATION for unknown
    // flags, UNSUPPORTED_FEATURE for a timestamp flag the device cannot honour,
    // DEVICE_LOST once lost, OUT_OF_HOST_MEMORY when memory runs out. With kPoolIpc and a
    // linear clock the events live in a shared file (HostEventPool::ipc_file).
    ze_result_t create_pool(uint32_t count, uint32_t flags, std::shared_ptr<EventPool>* out);
    static constexpr uint32_t kMaxEventsPerPool = 1u << 20;

    // True once lose() was called.
    bool lost() const noexcept { return lost_.load(std::memory_order_acquire); }
    // lost() as a seq_cst load, for a check that must take its place in the single total
    // order of seq_cst operations with lose()'s exchange (see sim's CommandGate).
    bool lost_seq_cst() const noexcept { return lost_.load(std::memory_order_seq_cst); }
    // Marks the device lost: every event call answers DEVICE_LOST from now on, and every
    // thread waiting on one of its events wakes up (and so does the signal listener).
    // True for the call that lost it, false when it was lost already.
    bool lose();

    // The reference pair for synchronized timestamps of a command submitted now: the last
    // pair sampled, re-sampled when older than half the wrap period of kernel timestamps.
    TimestampReference reference();
    // A fresh pair sampled now.
    TimestampReference sample() const { return sampler_(); }

    // Wake-ups for threads (engines) that wait for some event to be signalled: while at
    // least one watcher is registered, every signal of an event of this domain calls the
    // listener. A watcher registers, re-checks the events it waits for, then sleeps; the
    // listener wakes it (the pattern is race-free: see add_watcher).
    void set_listener(std::function<void()> listener);
    void add_watcher() noexcept;
    void remove_watcher() noexcept;
    // Called after an event of this domain was signalled.
    void notify_signal();

private:
    friend class HostEventPool;
    friend ze_result_t open_ipc_event_pool(int fd, std::shared_ptr<EventPool>* out);
    void register_pool(const std::shared_ptr<HostEventPool>& pool);

    const Params params_;
    const Sampler sampler_;
    const Clock clock_;
    const uint64_t half_wrap_ns_;
    std::atomic<bool> lost_{false};

    std::mutex ref_mu_;  // the cached reference pair
    TimestampReference ref_{};
    bool ref_valid_ = false;

    std::mutex pools_mu_;  // pools to wake when the device is lost
    std::vector<std::weak_ptr<HostEventPool>> pools_;
    size_t prune_at_ = 16;

    std::atomic<uint32_t> watchers_{0};
    std::mutex listener_mu_;
    std::function<void()> listener_;
};

// One event of a HostEventPool.
class HostEvent final : public Event {
public:
    HostEvent() = default;

    ze_result_t query() override;
    ze_result_t host_synchronize(uint64_t timeout_ns) override;
    ze_result_t host_signal() override;
    ze_result_t host_reset() override;
    ze_result_t query_kernel_timestamps(uint32_t* count, KernelTimestampResult* out) override;
    ze_result_t query_synchronized_timestamps(uint32_t* count, KernelTimestampResult* out) override;
    EventPool& pool() override;

    // --- the device side ---
    // The domain of the device this event belongs to.
    EventDomain& domain() const noexcept;
    // Whether commands signalling it record kernel timestamps (a timestamp pool).
    bool records_timestamps() const noexcept;
    // True once signalled (and not reset). seq_cst (acquire at least: what the signaller
    // wrote is visible): a watcher's registration then this load pair with the signaller's
    // seq_cst store then its load of the watcher count (EventDomain::add_watcher).
    bool signalled() const noexcept {
        return (slot_->state.load(std::memory_order_seq_cst) & EventSlot::kSignalled) != 0;
    }
    // True when its device is lost: this process's, or (an IPC pool's event) the exporter's.
    // Acquire, as WaitWord::load: the lost bit publishes nothing else, any order would do.
    bool lost() const noexcept {
        return domain().lost() || (slot_->state.load(std::memory_order_acquire) & EventSlot::kLost) != 0;
    }
    // True for an event of an IPC pool: another process may signal it, and no listener of
    // this process hears that (its waiters look at it again now and then).
    bool shared() const noexcept;
    // Signals from a command that recorded `packets` (device ticks, masked to the kernel
    // timestamp valid bits; at most the domain's max_packets) with `ref` sampled at its
    // submission. Wakes waiters and the domain's listener.
    void signal_from_device(std::span<const KernelTimestampResult> packets, const TimestampReference& ref);
    // Signals with no timestamps (zero packets): a command taken back before it ran.
    void signal_without_timestamps();
    // Wakes waiters of a lost device (sets the lost bit of the state word).
    void mark_lost() noexcept { slot_->state.fetch_or(EventSlot::kLost); }

private:
    friend class HostEventPool;

    // Stores the packets and ref, then signals.
    void signal_with(std::span<const KernelTimestampResult> packets, const TimestampReference& ref);
    ze_result_t query_packets(uint32_t* count, KernelTimestampResult* out, bool synchronized);

    HostEventPool* pool_ = nullptr;
    EventSlot* slot_ = nullptr;  // in the pool's memory (or its shared file)
};

// A pool of HostEvents. Created by EventDomain::create_pool or open_ipc_event_pool; each
// event handed out keeps the pool (and so the domain) alive.
class HostEventPool final : public EventPool, public std::enable_shared_from_this<HostEventPool> {
public:
    // A pool whose slots lie in this process's memory (`file` empty) or in `file`, an IPC
    // pool file made for it or opened. Throws std::bad_alloc.
    HostEventPool(std::shared_ptr<EventDomain> domain, uint32_t count, uint32_t flags, IpcPoolFile file = {});
    ~HostEventPool() override;
    HostEventPool(const HostEventPool&) = delete;
    HostEventPool& operator=(const HostEventPool&) = delete;

    uint32_t count() const override { return count_; }
    uint32_t flags() const override { return flags_; }
    ze_result_t event(uint32_t index, EventRef* out) override;
    // The shared file of an IPC pool: the fd stays the pool's. UNSUPPORTED_FEATURE for a pool
    // kept in this process's memory.
    ze_result_t ipc_file(int* fd, uint64_t* bytes) override;

    EventDomain& domain() const noexcept { return *domain_; }
    // True when the slots lie in a file other processes may map.
    bool shared() const noexcept { return file_.bytes() != 0; }
    // Sets the lost bit of every event (EventDomain::lose).
    void mark_lost() noexcept;

private:
    friend class HostEvent;
    // Packets each slot holds: max_packets for a timestamp pool, else 0.
    uint32_t packets_per_event() const noexcept;

    const std::shared_ptr<EventDomain> domain_;
    const uint32_t count_;
    const uint32_t flags_;
    IpcPoolFile file_;  // the shared file, or empty
    // Private slots, event_slot_stride() apart: allocated and constructed here (or null).
    std::unique_ptr<unsigned char[]> private_slots_;
    std::unique_ptr<HostEvent[]> events_;
};

// The IPC pool whose file is open under `fd` in this process (the caller keeps the fd): the
// exporter's events, seen from here. Its events belong to a domain of their own with the
// exporter's device facts and clock (so commands of this process's devices timestamp them in
// the exporter's ticks). INVALID_NULL_POINTER for a null `out`; INVALID_ARGUMENT for a file
// that is no IPC pool file; OUT_OF_HOST_MEMORY when memory runs out.
ze_result_t open_ipc_event_pool(int fd, std::shared_ptr<EventPool>* out);

}  // namespace zehal::hal
