#include "hal/sim/sim_engine.hpp"

#include <algorithm>
#include <cstring>
#include <new>
#include <system_error>
#include <utility>

#include "hal/trace_record.hpp"

namespace zehal::sim {

namespace {

// An idle engine spins this long for the next command before it sleeps: back-to-back
// submissions (a copy, a wait, the next copy) then never pay for a wake-up.
constexpr uint64_t kEngineSpinNs = 50'000;

// Writes `len` bytes at `dst` with `pattern` (`psize` bytes, a power of two dividing len).
void fill_pattern(unsigned char* dst, size_t len, const unsigned char* pattern, size_t psize) {
    if (psize == 1) {
        std::memset(dst, pattern[0], len);
        return;
    }
    // One copy of the pattern, then double what is written until a block of 64 KiB, then
    // copy that block: each memcpy reads bytes already written, never overlapping.
    std::memcpy(dst, pattern, psize);
    size_t done = psize;
    constexpr size_t kBlock = 64u << 10;
    while (done < len && done < kBlock) {
        const size_t n = std::min(done, len - done);
        std::memcpy(dst + done, dst, n);
        done += n;
    }
    while (done < len) {
        const size_t n = std::min(kBlock, len - done);
        std::memcpy(dst + done, dst, n);
        done += n;
    }
}

// The bytes per second a command moves at (0: unthrottled): the engine's, and the link's for
// one that touches a peer's memory, whichever is lower.
uint64_t throttle_of(const SimConfig& config, bool peer_link) {
    const uint64_t engine = config.bandwidth_bytes_per_s;
    const uint64_t link = peer_link ? config.link_bandwidth_bytes_per_s : 0;
    if (engine == 0 || link == 0) return engine | link;
    return std::min(engine, link);
}

}  // namespace

// ---------------------------------------------------------------- QueueState

QueueState::~QueueState() {
    for (Command* list : {head, free_list}) {
        while (list) {
            Command* next = list->next;
            for (hal::PointerRegistry::InFlight* h : list->holds) hal::PointerRegistry::release(h);
            delete list;
            list = next;
        }
    }
}

Command* QueueState::take_node() {
    if (Command* c = free_list) {
        free_list = c->next;
        c->next = nullptr;
        return c;
    }
    return new (std::nothrow) Command;
}

void QueueState::recycle(Command* c) {
    for (hal::PointerRegistry::InFlight*& h : c->holds) hal::PointerRegistry::release(std::exchange(h, nullptr));
    c->signal.reset();
    c->waits.clear();
    c->events.clear();
    c->offsets.clear();
    c->work.reset();
    c->next = free_list;
    free_list = c;
}

// ---------------------------------------------------------------- Engine

Engine::Engine(const EngineContext& ctx, uint32_t ordinal, uint32_t index)
    : ctx_(ctx),
      ordinal_(ordinal),
      index_(index),
      parts_(std::max<uint32_t>(1, ctx.config->subdevices)),
      kernel_mask_(hal::timestamp_max(ctx.config->kernel_timestamp_valid_bits)),
      packets_(parts_),
      spans_(parts_) {}

Engine::~Engine() {
    stop_.store(true, std::memory_order_release);
    wake();
    std::thread thread;
    {
        std::lock_guard lock(mu_);
        thread = std::move(thread_);
    }
    // Joined without mu_: the thread takes it while it finishes.
    if (thread.joinable()) thread.join();
}

bool Engine::bind(const std::shared_ptr<QueueState>& queue) {
    {
        std::lock_guard lock(mu_);
        if (!thread_.joinable()) {
            try {
                thread_ = std::thread(&Engine::run, this);
            } catch (const std::system_error&) {
                return false;
            }
        }
        queues_.push_back(queue);
        version_.fetch_add(1, std::memory_order_release);
    }
    wake();
    return true;
}

void Engine::on_lost() {
    {
        std::lock_guard lock(mu_);
        for (const auto& q : queues_) q->progress.fetch_add(1);
    }
    wake();
}

void Engine::refresh(std::vector<std::shared_ptr<QueueState>>& queues, uint64_t* version) {
    const bool gone = std::any_of(queues.begin(), queues.end(), [](const std::shared_ptr<QueueState>& q) {
        // Acquire: the queue object's last submission happened before it closed.
        return q->closed.load(std::memory_order_acquire) && q->pending.load(std::memory_order_acquire) == 0;
    });
    if (!gone && version_.load(std::memory_order_acquire) == *version) return;
    std::lock_guard lock(mu_);
    if (gone) {
        std::erase_if(queues_, [](const std::shared_ptr<QueueState>& q) {
            return q->closed.load(std::memory_order_acquire) && q->pending.load(std::memory_order_acquire) == 0;
        });
        version_.fetch_add(1, std::memory_order_release);
    }
    queues = queues_;
    *version = version_.load(std::memory_order_relaxed);
}

void Engine::run() {
    std::vector<std::shared_ptr<QueueState>> queues;
    uint64_t version = ~0ull;
    bool watching = false;
    for (;;) {
        const uint32_t seen = wake_.load();
        const bool stop = stopping();
        refresh(queues, &version);
        bool ran = false;
        bool blocked = false;
        waits_foreign_ = false;
        scan(queues, &ran, &blocked);
        if (ran) continue;
        if (stop) break;
        if (blocked != watching) {
            // Waiting for an event: ask the domain to wake us on every signal, then re-scan
            // before sleeping so that a signal in between is not missed.
            if (blocked)
                ctx_.domain->add_watcher();
            else
                ctx_.domain->remove_watcher();
            watching = blocked;
            continue;
        }
        // Another device's or process's signals do not wake this engine: it looks again after
        // a while.
        wake_.wait(seen, waits_foreign_ ? host_now_ns() + kForeignEventPollNs : kWaitForever, kEngineSpinNs);
    }
    if (watching) ctx_.domain->remove_watcher();
    // Shut down: what is left waits for events that will not come; release its waiters.
    refresh(queues, &version);
    for (const auto& q : queues) drop_pending(*q, true);
}

void Engine::scan(std::vector<std::shared_ptr<QueueState>>& queues, bool* ran, bool* blocked) {
    for (const auto& q : queues) {
        // Acquire: pairs with the submitters' release of the count.
        if (q->pending.load(std::memory_order_acquire) == 0) continue;
        if (!ctx_.gate->enter(*ctx_.domain)) {
            drop_pending(*q, false);  // lost: nothing queued runs any more
            continue;
        }
        if (Command* c = take_ready(*q, blocked)) {
            execute(*q, c);
            *ran = true;
        }
        ctx_.gate->leave();
    }
}

Command* Engine::take_ready(QueueState& q, bool* blocked) {
    if (q.pending.load(std::memory_order_acquire) == 0) return nullptr;
    if (ctx_.domain->lost()) {
        drop_pending(q, false);
        return nullptr;
    }
    std::lock_guard lock(q.mu);
    Command* c = q.head;
    if (!c) return nullptr;
    for (const hal::EventRef& w : c->waits) {
        const auto* event = static_cast<const hal::HostEvent*>(w.get());
        // Another device's event whose device is lost is never signalled: the wait is over,
        // as the host's is (it answers DEVICE_LOST), and this device goes on.
        if (!event->signalled() && !event->lost()) {
            *blocked = true;
            // Signals of another device, or of another process (an IPC pool's event), do not
            // wake this engine: it looks again after a while.
            if (&event->domain() != ctx_.domain || event->shared()) waits_foreign_ = true;
            return nullptr;
        }
    }
    q.head = c->next;
    if (!q.head) q.tail = nullptr;
    c->next = nullptr;
    // Release: pairs with the acquire in take_ready/refresh (only this thread and the
    // submitters, under mu, write it).
    q.pending.store(q.pending.load(std::memory_order_relaxed) - 1, std::memory_order_release);
    return c;
}

void Engine::drop_pending(QueueState& q, bool signal) {
    Command* list = nullptr;
    uint32_t n = 0;
    {
        std::lock_guard lock(q.mu);
        list = q.head;
        q.head = q.tail = nullptr;
        n = q.pending.load(std::memory_order_relaxed);
        q.pending.store(0, std::memory_order_release);
    }
    if (!list) return;
    if (signal) {
        for (Command* c = list; c; c = c->next)
            if (c->signal) static_cast<hal::HostEvent*>(c->signal.get())->signal_without_timestamps();
    }
    {
        std::lock_guard lock(q.mu);
        while (list) {
            Command* next = list->next;
            q.recycle(list);
            list = next;
        }
    }
    // Release: synchronizers that see the count see the events signalled above.
    q.finished.fetch_add(n, std::memory_order_release);
    q.progress.fetch_add(1);
}

bool Engine::wait_until_ns(uint64_t deadline_ns) {
    for (;;) {
        const uint32_t seen = wake_.load();
        if (ctx_.domain->lost() || stopping()) return false;
        const uint64_t now = host_now_ns();
        if (now >= deadline_ns) return true;
        // Short remainders are spun (sleep granularity is coarser); long ones slept.
        const uint64_t left = deadline_ns - now;
        wake_.wait(seen, deadline_ns, left < kDefaultSpinNs ? left : 0);
    }
}

void Engine::execute(QueueState& q, Command* c) {
    auto* event = static_cast<hal::HostEvent*>(c->signal.get());
    const bool timestamps = event && event->records_timestamps();
    // The event may be another sim device's: its timestamps are in that device's ticks.
    const hal::EventDomain* foreign = timestamps && &event->domain() != ctx_.domain ? &event->domain() : nullptr;
    // Timestamped and traced commands keep to tick boundaries, so that their ticks map to
    // host times between submission and completion (docs/timestamps.md).
    const bool aligned = timestamps || ctx_.tracing->active();
    // A command that starts more than half a wrap period after its submission (it waited
    // for events) takes a younger reference pair, so its start ticks still map unambiguously.
    if (timestamps && host_now_ns() > c->ref.host_ns + event->domain().half_wrap_ns())
        c->ref = event->domain().reference();

    if (is_step(c->kind)) run_step(*c);
    const Ran ran = c->kind == CommandKind::kernel ? run_kernel(q, *c, aligned) : run_parts(q, *c, aligned);
    if (!ran.aborted && c->export_group != kNoExport && c->kind != CommandKind::barrier) {
        uint32_t word = 0;
        std::memcpy(&word, c->dst, std::min<size_t>(sizeof word, c->size));
        ctx_.trace->on_export_write(c->export_group, word, ran.first_end, parts_ > 1 ? 0 : hal::kRootDevice);
    }
    if (aligned && !ran.aborted) wait_past(ran.last_end);
    uint32_t packets = parts_;
    if (foreign && !ran.aborted) {
        uint64_t last_end = 0;
        packets = retime_packets(*foreign, &last_end);
        wait_past(last_end, foreign);
    }
    finish(q, c, event, ran.aborted, packets);
}

uint32_t Engine::retime_packets(const hal::EventDomain& domain, uint64_t* last_end) {
    const hal::EventDomain::Params& p = domain.params();
    const uint64_t mask = hal::timestamp_max(p.kernel_timestamp_valid_bits);
    const uint32_t n = std::min(parts_, std::max<uint32_t>(1, p.max_packets));
    *last_end = 0;
    for (uint32_t i = 0; i < n; ++i) {
        // The last packet spans every part from i on.
        const uint32_t through = i + 1 == n ? parts_ : i + 1;
        uint64_t host_start = spans_[i].start;
        uint64_t host_end = spans_[i].end;
        for (uint32_t k = i + 1; k < through; ++k) {
            host_start = std::min(host_start, spans_[k].start);
            host_end = std::max(host_end, spans_[k].end);
        }
        // Aligned as the device's own start is: the tick after the one current at the start.
        const uint64_t start = domain.ticks_at(host_start) + 1;
        const uint64_t end = std::max(domain.ticks_at(host_end), start);
        packets_[i] = {start & mask, end & mask, start & mask, end & mask};
        *last_end = std::max(*last_end, end);
    }
    return n;
}

Engine::Ran Engine::run_parts(QueueState& q, const Command& c, bool aligned) {
    const SimClock& clock = *ctx_.clock;
    const uint64_t bandwidth = throttle_of(*ctx_.config, c.peer_link);
    const size_t unit = c.kind == CommandKind::fill ? c.pattern_size : 1;
    const bool moves_data = c.kind == CommandKind::copy || c.kind == CommandKind::fill;
    const size_t units = moves_data ? c.size / unit : 0;
    const uint32_t depth = q.pending.load(std::memory_order_relaxed);
    auto* dst = static_cast<unsigned char*>(c.dst);
    auto* src = static_cast<const unsigned char*>(c.src);
    Ran ran;
    // One part per sub-device (one on the root device), each a share of the bytes.
    for (uint32_t i = 0; i < parts_; ++i) {
        const size_t begin = units * i / parts_ * unit;
        const size_t len = units * (i + 1) / parts_ * unit - begin;
        const uint64_t host_start = host_now_ns();
        // An aligned command starts at the next tick boundary, so that the start maps to a
        // host time after this instant (contract §3 ordering, see docs/timestamps.md).
        const uint64_t start = clock.ticks_at(host_start) + (aligned ? 1 : 0);
        if (len) {
            if (c.kind == CommandKind::copy)
                std::memcpy(dst + begin, src + begin, len);
            else
                fill_pattern(dst + begin, len, c.pattern, c.pattern_size);
            if (bandwidth) {
                const uint64_t ns = static_cast<uint64_t>(static_cast<unsigned __int128>(len) * 1'000'000'000u /
                                                          bandwidth);
                if (!wait_until_ns(host_start + ns)) {
                    ran.aborted = true;
                    break;
                }
            }
        }
        const uint64_t host_end = host_now_ns();
        const uint64_t end = std::max(clock.ticks_at(host_end), start);
        packets_[i] = {start & kernel_mask_, end & kernel_mask_, start & kernel_mask_, end & kernel_mask_};
        spans_[i] = {host_start, host_end};
        ran.last_end = std::max(ran.last_end, end);
        if (i == 0) ran.first_end = end;
        const CommandKind traced = moves_data ? c.kind : CommandKind::barrier;
        ctx_.trace->on_command(CommandTrace{ordinal_, index_, q.id, static_cast<uint32_t>(traced), len, start, end,
                                            depth, parts_ > 1 ? i : hal::kRootDevice});
    }
    return ran;
}

Engine::Ran Engine::run_kernel(QueueState& q, const Command& c, bool aligned) {
    const SimClock& clock = *ctx_.clock;
    const uint32_t depth = q.pending.load(std::memory_order_relaxed);
    // Aligned as run_parts' parts are.
    const uint64_t host_start = host_now_ns();
    const uint64_t start = clock.ticks_at(host_start) + (aligned ? 1 : 0);
    std::string error;
    Ran ran;
    if (c.work->run(&error) != ZE_RESULT_SUCCESS) {
        // The kernel's writes are undefined from here on, as on a GPU after a fault.
        ctx_.lose();
        ran.aborted = true;
        return ran;
    }
    const uint64_t host_end = host_now_ns();
    const uint64_t end = std::max(clock.ticks_at(host_end), start);
    for (uint32_t i = 0; i < parts_; ++i) {
        packets_[i] = {start & kernel_mask_, end & kernel_mask_, start & kernel_mask_, end & kernel_mask_};
        spans_[i] = {host_start, host_end};
        ctx_.trace->on_command(CommandTrace{ordinal_, index_, q.id, kTraceKernel, 0, start, end, depth,
                                            parts_ > 1 ? i : hal::kRootDevice});
    }
    ran.first_end = ran.last_end = end;
    return ran;
}

void Engine::run_step(const Command& c) {
    switch (c.kind) {
        case CommandKind::reset:
            // Fails only once the device is lost, when the event answers DEVICE_LOST anyway.
            static_cast<void>(c.events.front()->host_reset());
            return;
        case CommandKind::write_timestamp: {
            // The device's global timestamp, as SimDevice::global_timestamps reads it.
            const uint64_t ticks = ctx_.clock->now() & hal::timestamp_max(ctx_.config->timestamp_valid_bits);
            std::memcpy(c.dst, &ticks, sizeof ticks);
            return;
        }
        case CommandKind::query_timestamps: {
            auto* dst = static_cast<unsigned char*>(c.dst);
            for (size_t i = 0; i < c.events.size(); ++i) {
                // Zeros for an event not signalled or signalled without timestamps (no packet).
                hal::KernelTimestampResult ts{};
                uint32_t count = 1;
                static_cast<void>(c.events[i]->query_kernel_timestamps(&count, &ts));
                const size_t offset = c.offsets.empty() ? i * sizeof ts : c.offsets[i];
                std::memcpy(dst + offset, &ts, sizeof ts);
            }
            return;
        }
        default:
            return;
    }
}

void Engine::wait_past(uint64_t end_ticks, const hal::EventDomain* domain) {
    // Signal only once the clock has passed the end tick: the end then maps to a host time
    // before any waiter wakes.
    const SimClock& clock = *ctx_.clock;
    const uint64_t hz = domain ? domain->params().timer_hz : clock.hz();
    const uint64_t period_ns = 1'000'000'000u / hz;
    auto now = [&] { return domain ? domain->ticks_at(host_now_ns()) : clock.now(); };
    while (now() <= end_ticks) {
        if (period_ns > 50'000) {
            if (!wait_until_ns(host_now_ns() + std::min<uint64_t>(period_ns / 4, 1'000'000))) break;
        } else {
            cpu_relax();
        }
    }
}

void Engine::finish(QueueState& q, Command* c, hal::HostEvent* event, bool aborted, uint32_t packets) {
    {
        // The event and the count change together under mu: whoever saw the event signalled
        // finds the queue synchronized (SimQueue::host_synchronize re-checks under mu), and
        // the other way round. The event's own domain wakes the engines that wait for it.
        std::lock_guard lock(q.mu);
        if (event && !ctx_.domain->lost() && !event->domain().lost()) {
            if (aborted)
                event->signal_without_timestamps();
            else
                event->signal_from_device({packets_.data(), packets}, c->ref);
        }
        q.recycle(c);
        // Release: a synchronizer that sees the count sees the command's writes and its event.
        q.finished.fetch_add(1, std::memory_order_release);
    }
    q.progress.fetch_add(1);
}

}  // namespace zehal::sim
