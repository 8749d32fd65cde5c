#include "hal/sim/sim_queue.hpp"

#include <cstring>
#include <new>
#include <utility>

#include "common/wait_word.hpp"

namespace zehal::sim {

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

ze_result_t SimQueue::find_operand(const void* p, size_t size, hal::OperandUse use, hal::Operand* out,
                                   hal::PointerRegistry::InFlight** held) {
    return device_->find_memory(p, size, &out->allocation, held, &out->peer, use);
}

ze_result_t SimQueue::do_append_copy(void* dst, hal::PlacedOperand& to, const void* src, hal::PlacedOperand& from,
                                     size_t size, const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    return submit(CommandKind::copy, dst, src, size, nullptr, 0, SimDevice::export_group_of(to.operand.allocation),
                  signal, waits, {&to, &from});
}

ze_result_t SimQueue::do_append_fill(void* dst, hal::PlacedOperand& to, const void* pattern, size_t pattern_size,
                                     size_t size, const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    return submit(CommandKind::fill, dst, nullptr, size, pattern, pattern_size,
                  SimDevice::export_group_of(to.operand.allocation), signal, waits, {&to, nullptr});
}

ze_result_t SimQueue::do_append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    return submit(CommandKind::barrier, nullptr, nullptr, 0, nullptr, 0, kNoExport, signal, waits, {});
}

ze_result_t SimQueue::do_append_event_reset(const hal::EventRef& event) {
    return submit(CommandKind::reset, nullptr, nullptr, 0, nullptr, 0, kNoExport, nullptr, {}, {}, {&event, 1});
}

ze_result_t SimQueue::do_append_write_global_timestamp(uint64_t* dst, hal::PlacedOperand& to,
                                                       const hal::EventRef& signal,
                                                       std::span<const hal::EventRef> waits) {
    return submit(CommandKind::write_timestamp, dst, nullptr, sizeof *dst, nullptr, 0, kNoExport, signal, waits,
                  {&to, nullptr});
}

ze_result_t SimQueue::do_append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst,
                                                        const size_t* offsets, std::span<const hal::Operand>,
                                                        const hal::EventRef& signal,
                                                        std::span<const hal::EventRef> waits) {
    // The results' allocations are not held (they may be many): their memory is the
    // caller's to keep until the query ran, as with a kernel's arguments.
    return submit(CommandKind::query_timestamps, dst, nullptr, 0, nullptr, 0, kNoExport, signal, waits, {}, events,
                  offsets ? std::span<const size_t>(offsets, events.size()) : std::span<const size_t>());
}

ze_result_t SimQueue::submit(CommandKind kind, void* dst, const void* src, size_t size, const void* pattern,
                             size_t pattern_size, uint32_t export_group, const hal::EventRef& signal,
                             std::span<const hal::EventRef> waits, Operands operands,
                             std::span<const hal::EventRef> events, std::span<const size_t> offsets,
                             std::unique_ptr<KernelWork>* work) {
    // The events signalled, reset or queried may be another sim device's
    // (SimDevice::signals_event): a lost device's take no more commands, and a timestamp
    // event's reference pair is its own device's.
    auto* event = static_cast<hal::HostEvent*>(signal.get());
    if (event && event->domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    for (const hal::EventRef& e : events)
        if (static_cast<hal::HostEvent*>(e.get())->domain().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    hal::TimestampReference ref{};
    if (event && event->records_timestamps()) ref = event->domain().reference();
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
        hal::PlacedOperand* placed[2] = {operands.to, operands.from};
        c->peer_link = false;
        for (int i = 0; i < 2; ++i) {
            c->holds[i] = placed[i] ? placed[i]->take_hold() : nullptr;
            c->peer_link = c->peer_link || (placed[i] && placed[i]->operand.peer);
        }
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

ze_result_t SimQueue::do_host_synchronize(uint64_t timeout_ns) {
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

ze_result_t SimQueue::do_cancel(const hal::EventRef& signal) {
    // Checked by Queue::cancel: an event of a sim device (SimDevice::signals_event).
    auto* event = static_cast<hal::HostEvent*>(signal.get());
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
