#include "hal/sim/sim_queue.hpp"

#include <cstring>
#include <new>
#include <utility>

#include "common/wait_word.hpp"

namespace zehal::sim {

namespace {

bool overlap(const void* a, const void* b, size_t size) {
    const auto x = reinterpret_cast<uintptr_t>(a);
    const auto y = reinterpret_cast<uintptr_t>(b);
    return x < y + size && y < x + size;
}

}  // namespace

SimQueue::Holds::~Holds() {
    // The holds go before the peers (members, destroyed after this): a peer's destruction
    // waits for them.
    for (hal::PointerRegistry::InFlight* h : of) hal::PointerRegistry::release(h);
}

SimQueue::SimQueue(std::shared_ptr<SimDevice> device, Engine* engine, std::shared_ptr<QueueState> state)
    : device_(std::move(device)),
      engine_(engine),
      state_(std::move(state)) {}

SimQueue::~SimQueue() {
    // Release: every submission of this object happened before; the engine drops the state
    // once it sees this and an empty list.
    state_->closed.store(true, std::memory_order_release);
    engine_->wake();
}

ze_result_t SimQueue::check_events(const hal::EventRef& signal, std::span<const hal::EventRef> waits) const {
    if (signal && !hal::host_event_of(signal, device_->domain())) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (const hal::EventRef& w : waits) {
        if (!w) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!device_->waits_for_event(*w)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimQueue::append_copy(void* dst, const void* src, size_t size, const hal::EventRef& signal,
                                  std::span<const hal::EventRef> waits) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    hal::Allocation to;
    hal::Allocation from;
    Holds holds;
    if (ze_result_t r = device_->find_memory(dst, size, &to, &holds.of[0], &holds.peer[0], hal::OperandUse::write);
        r != ZE_RESULT_SUCCESS)
        return r;
    if (ze_result_t r = device_->find_memory(src, size, &from, &holds.of[1], &holds.peer[1]); r != ZE_RESULT_SUCCESS)
        return r;
    if (overlap(dst, src, size)) return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
    if (ze_result_t r = check_events(signal, waits); r != ZE_RESULT_SUCCESS) return r;
    return submit(CommandKind::copy, dst, src, size, nullptr, 0, SimDevice::export_group_of(to), signal, waits, holds);
}

ze_result_t SimQueue::append_fill(void* dst, const void* pattern, size_t pattern_size, size_t size,
                                  const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!dst || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0 || pattern_size == 0 || pattern_size > kMaxPattern || (pattern_size & (pattern_size - 1)) ||
        size % pattern_size)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    hal::Allocation to;
    Holds holds;
    if (ze_result_t r = device_->find_memory(dst, size, &to, &holds.of[0], &holds.peer[0], hal::OperandUse::write);
        r != ZE_RESULT_SUCCESS)
        return r;
    if (ze_result_t r = check_events(signal, waits); r != ZE_RESULT_SUCCESS) return r;
    return submit(CommandKind::fill, dst, nullptr, size, pattern, pattern_size, SimDevice::export_group_of(to), signal,
                  waits, holds);
}

ze_result_t SimQueue::append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (ze_result_t r = check_events(signal, waits); r != ZE_RESULT_SUCCESS) return r;
    Holds none;
    return submit(CommandKind::barrier, nullptr, nullptr, 0, nullptr, 0, kNoExport, signal, waits, none);
}

ze_result_t SimQueue::append_event_reset(const hal::EventRef& event) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!hal::host_event_of(event, device_->domain())) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    Holds none;
    return submit(CommandKind::reset, nullptr, nullptr, 0, nullptr, 0, kNoExport, nullptr, {}, none, {&event, 1});
}

ze_result_t SimQueue::append_write_global_timestamp(uint64_t* dst, const hal::EventRef& signal,
                                                    std::span<const hal::EventRef> waits) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (reinterpret_cast<uintptr_t>(dst) % alignof(uint64_t)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    hal::Allocation to;
    Holds holds;
    if (ze_result_t r = device_->find_memory(dst, sizeof *dst, &to, &holds.of[0], &holds.peer[0],
                                             hal::OperandUse::write);
        r != ZE_RESULT_SUCCESS)
        return r;
    if (ze_result_t r = check_events(signal, waits); r != ZE_RESULT_SUCCESS) return r;
    return submit(CommandKind::write_timestamp, dst, nullptr, sizeof *dst, nullptr, 0, kNoExport, signal, waits, holds);
}

ze_result_t SimQueue::append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst,
                                                     const size_t* offsets, const hal::EventRef& signal,
                                                     std::span<const hal::EventRef> waits) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (events.empty()) return ZE_RESULT_ERROR_INVALID_SIZE;
    // Everything is checked before the command is queued: a refused query writes nothing.
    for (size_t i = 0; i < events.size(); ++i) {
        if (!events[i]) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!hal::host_event_of(events[i], device_->domain())) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (!(events[i]->pool().flags() & (hal::kPoolKernelTimestamp | hal::kPoolKernelMappedTimestamp)))
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        const size_t offset = offsets ? offsets[i] : i * sizeof(hal::KernelTimestampResult);
        hal::Allocation to;
        const void* at = reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(dst) + offset);
        if (ze_result_t r = device_->find_memory(at, sizeof(hal::KernelTimestampResult), &to, nullptr, nullptr,
                                                 hal::OperandUse::write);
            r != ZE_RESULT_SUCCESS)
            return r;
    }
    if (ze_result_t r = check_events(signal, waits); r != ZE_RESULT_SUCCESS) return r;
    // The results' allocations are not held (they may be many): their memory is the
    // caller's to keep until the query ran, as with a kernel's arguments.
    Holds none;
    return submit(CommandKind::query_timestamps, dst, nullptr, 0, nullptr, 0, kNoExport, signal, waits, none, events,
                  offsets ? std::span<const size_t>(offsets, events.size()) : std::span<const size_t>());
}

ze_result_t SimQueue::submit(CommandKind kind, void* dst, const void* src, size_t size, const void* pattern,
                             size_t pattern_size, uint32_t export_group, const hal::EventRef& signal,
                             std::span<const hal::EventRef> waits, Holds& holds, std::span<const hal::EventRef> events,
                             std::span<const size_t> offsets, std::unique_ptr<KernelWork>* work) {
    hal::TimestampReference ref{};
    if (signal && static_cast<hal::HostEvent*>(signal.get())->records_timestamps()) ref = device_->domain().reference();
    {
        std::lock_guard lock(state_->mu);
        Command* c = state_->take_node();
        if (!c) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        try {
            c->waits.assign(waits.begin(), waits.end());
            c->events.assign(events.begin(), events.end());
            c->offsets.assign(offsets.begin(), offsets.end());
        } catch (const std::bad_alloc&) {
            state_->recycle(c);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        c->kind = kind;
        c->dst = dst;
        c->src = src;
        c->size = size;
        c->pattern_size = static_cast<uint32_t>(pattern_size);
        if (pattern_size) std::memcpy(c->pattern, pattern, pattern_size);
        c->export_group = export_group;
        c->signal = signal;
        c->ref = ref;
        for (int i = 0; i < 2; ++i) c->holds[i] = std::exchange(holds.of[i], nullptr);
        c->peer_link = holds.peer[0] || holds.peer[1];
        if (work) c->work = std::move(*work);
        if (state_->tail)
            state_->tail->next = c;
        else
            state_->head = c;
        state_->tail = c;
        // Release: the engine's acquire load of `pending` (before it takes mu) then sees a
        // list that holds the command; synchronizers' acquire of `submitted` likewise.
        state_->pending.store(state_->pending.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        state_->submitted.store(state_->submitted.load(std::memory_order_relaxed) + 1, std::memory_order_release);
    }
    engine_->wake();
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimQueue::host_synchronize(uint64_t timeout_ns) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    // Acquire: pairs with the release stores of submit() and of the engine's completions.
    const uint64_t target = state_->submitted.load(std::memory_order_acquire);
    auto done = [&] { return state_->finished.load(std::memory_order_acquire) >= target || device_->lost(); };
    bool ok = done();
    if (!ok && timeout_ns != 0) ok = wait_until(state_->progress, done, deadline_after(timeout_ns));
    if (!ok) {
        // A command may be completing right now (its event already signalled, the count not
        // yet raised): the engine does both under mu, so look once more holding it.
        std::lock_guard lock(state_->mu);
        ok = done();
    }
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return ok ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

ze_result_t SimQueue::cancel(const hal::EventRef& signal) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!signal) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    auto* event = hal::host_event_of(signal, device_->domain());
    if (!event) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    {
        std::lock_guard lock(state_->mu);
        Command* prev = nullptr;
        Command* c = state_->head;
        while (c && c->signal.get() != event) {
            prev = c;
            c = c->next;
        }
        if (!c) return ZE_RESULT_NOT_READY;
        (prev ? prev->next : state_->head) = c->next;
        if (state_->tail == c) state_->tail = prev;
        state_->pending.store(state_->pending.load(std::memory_order_relaxed) - 1, std::memory_order_release);
        state_->recycle(c);  // the caller's reference keeps the event alive
        // Event and count change together under mu, as when the engine completes a command.
        event->signal_without_timestamps();
        // Release: a synchronizer that sees the count sees the event signalled.
        state_->finished.fetch_add(1, std::memory_order_release);
    }
    state_->progress.fetch_add(1);
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::sim
