#include "hal/level_zero/level_zero_queue.hpp"

#include <algorithm>
#include <cstring>
#include <new>

#include "common/clock.hpp"

namespace zehal::level_zero {

namespace {

// Bytes moved per round trip on the pageable path.
constexpr size_t kStagingBytes = size_t{8} << 20;

bool is_host(const hal::Operand& o) noexcept { return !hal::is_device_memory(o.placement); }

// Fills [dst, dst + size) with `pattern` repeated, on the host.
void host_fill(void* dst, const void* pattern, size_t pattern_size, size_t size) {
    auto* d = static_cast<uint8_t*>(dst);
    for (size_t off = 0; off < size; off += pattern_size) std::memcpy(d + off, pattern, pattern_size);
}

}  // namespace

ze_result_t ZeQueue::create(const std::shared_ptr<ZeDevice>& device, uint32_t ordinal, uint32_t index,
                            std::shared_ptr<hal::Queue>* out) {
    const ZeApi& api = device->api();
    const ze_context_handle_t ctx = device->driver().context;
    ze_device_handle_t dev = device->handle();

    ze_event_pool_desc_t pool_desc{};
    pool_desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    pool_desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE;
    pool_desc.count = 2;
    ze_event_pool_handle_t pool = nullptr;
    if (ze_result_t r = api.zeEventPoolCreate(ctx, &pool_desc, 1, &dev, &pool); r != ZE_RESULT_SUCCESS)
        return device->check(r);
    ze_event_handle_t events[2] = {};
    ze_command_list_handle_t list = nullptr;
    ze_result_t r = ZE_RESULT_SUCCESS;
    for (uint32_t i = 0; i < 2 && r == ZE_RESULT_SUCCESS; ++i) {
        ze_event_desc_t desc{};
        desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
        desc.index = i;
        desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;
        desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
        r = api.zeEventCreate(pool, &desc, &events[i]);
    }
    if (r == ZE_RESULT_SUCCESS) {
        ze_command_queue_desc_t desc{};
        desc.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC;
        desc.ordinal = device->ze_ordinal(ordinal);
        desc.index = index;
        desc.mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
        desc.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL;
        r = api.zeCommandListCreateImmediate(ctx, dev, &desc, &list);
    }
    if (r == ZE_RESULT_SUCCESS) {
        try {
            *out = std::make_shared<ZeQueue>(device, ordinal, index, list, pool, events[0], events[1]);
            return ZE_RESULT_SUCCESS;
        } catch (const std::bad_alloc&) {
            r = ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
    }
    if (list) api.zeCommandListDestroy(list);
    for (ze_event_handle_t e : events)
        if (e) api.zeEventDestroy(e);
    api.zeEventPoolDestroy(pool);
    return device->check(r);
}

ZeQueue::ZeQueue(std::shared_ptr<ZeDevice> device, uint32_t ordinal, uint32_t index, ze_command_list_handle_t list,
                 ze_event_pool_handle_t sync_pool, ze_event_handle_t sync_event, ze_event_handle_t drain_event)
    : device_(std::move(device)),
      api_(device_->api()),
      ordinal_(ordinal),
      index_(index),
      list_(list),
      sync_pool_(sync_pool),
      sync_event_(sync_event),
      drain_event_(drain_event),
      operands_(device_->operand_cache()) {}

ZeQueue::~ZeQueue() {
    // Work still queued completes before the list and its events go.
    host_synchronize(kWaitForever);
    api_.zeCommandListDestroy(list_);
    api_.zeEventDestroy(sync_event_);
    api_.zeEventDestroy(drain_event_);
    api_.zeEventPoolDestroy(sync_pool_);
}

ze_result_t ZeQueue::find_operand(const void* p, size_t size, hal::OperandUse, hal::Operand* out,
                                  hal::PointerRegistry::InFlight** held) {
    if (held) *held = nullptr;
    std::lock_guard lock(mu_);
    return operands_.find(p, size, out);
}

ze_result_t ZeQueue::events_of(const hal::EventRef& signal, std::span<const hal::EventRef> waits, Events* out) {
    if (signal) out->signal = static_cast<ZeEvent*>(signal.get())->handle();
    try {
        out->waits.reserve(waits.size());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (const hal::EventRef& w : waits) out->waits.push_back(static_cast<ZeEvent*>(w.get())->handle());
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZeQueue::drain_locked(const Events& events) {
    for (ze_event_handle_t w : events.waits)
        if (ze_result_t r = api_.zeEventHostSynchronize(w, kWaitForever); r != ZE_RESULT_SUCCESS) return r;
    if (ZeCommandListHostSynchronizeFn sync = device_->driver().list_host_synchronize) {
        const ze_result_t r = sync(list_, kWaitForever);
        if (r != ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) return r;
    }
    ze_result_t r = api_.zeEventHostReset(drain_event_);
    if (r == ZE_RESULT_SUCCESS) r = api_.zeCommandListAppendBarrier(list_, drain_event_, 0, nullptr);
    if (r == ZE_RESULT_SUCCESS) r = api_.zeEventHostSynchronize(drain_event_, kWaitForever);
    return r;
}

ze_result_t ZeQueue::pageable_locked(void* dst, const hal::Operand& to, const void* src, const hal::Operand& from,
                                     const void* pattern, size_t pattern_size, size_t size, const Events& events) {
    if (ze_result_t r = drain_locked(events); r != ZE_RESULT_SUCCESS) return r;
    if (pattern) {
        host_fill(dst, pattern, pattern_size, size);
    } else if (is_host(to) && is_host(from)) {
        std::memmove(dst, src, size);
    } else if (ze_result_t r = staged_copy_locked(dst, is_host(to), src, size); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    // The signal comes after the bytes are in place.
    if (events.signal) return api_.zeCommandListAppendBarrier(list_, events.signal, 0, nullptr);
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZeQueue::staged_copy_locked(void* dst, bool dst_is_host, const void* src, size_t size) {
    const ze_context_handle_t ctx = device_->driver().context;
    ze_host_mem_alloc_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC;
    void* staging = nullptr;
    const size_t chunk = std::min(size, kStagingBytes);
    if (ze_result_t r = api_.zeMemAllocHost(ctx, &desc, chunk, 64, &staging); r != ZE_RESULT_SUCCESS) return r;
    const Events none;
    ze_result_t r = ZE_RESULT_SUCCESS;
    for (size_t off = 0; off < size && r == ZE_RESULT_SUCCESS; off += chunk) {
        const size_t n = std::min(chunk, size - off);
        auto* to = static_cast<uint8_t*>(dst) + off;
        const auto* from = static_cast<const uint8_t*>(src) + off;
        if (!dst_is_host) std::memcpy(staging, from, n);
        r = dst_is_host ? api_.zeCommandListAppendMemoryCopy(list_, staging, from, n, nullptr, 0, nullptr)
                        : api_.zeCommandListAppendMemoryCopy(list_, to, staging, n, nullptr, 0, nullptr);
        if (r == ZE_RESULT_SUCCESS) r = drain_locked(none);
        if (r == ZE_RESULT_SUCCESS && dst_is_host) std::memcpy(to, staging, n);
    }
    api_.zeMemFree(ctx, staging);
    return r;
}

ze_result_t ZeQueue::do_append_copy(void* dst, hal::PlacedOperand& to_operand, const void* src,
                                    hal::PlacedOperand& from_operand, size_t size, const hal::EventRef& signal,
                                    std::span<const hal::EventRef> waits) {
    const hal::Operand& to = to_operand.operand;
    const hal::Operand& from = from_operand.operand;
    Events events;
    if (ze_result_t r = events_of(signal, waits, &events); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(mu_);
    ++submitted_;
    // System memory goes to Level Zero as it is: Level Zero copies pageable memory itself.
    if (to.placement == hal::Placement::other_host || from.placement == hal::Placement::other_host)
        return device_->check(pageable_locked(dst, to, src, from, nullptr, 0, size, events));
    return device_->check(api_.zeCommandListAppendMemoryCopy(
        list_, dst, src, size, events.signal, static_cast<uint32_t>(events.waits.size()), events.waits.data()));
}

ze_result_t ZeQueue::do_append_fill(void* dst, hal::PlacedOperand& to_operand, const void* pattern, size_t pattern_size,
                                    size_t size, const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    const hal::Operand& to = to_operand.operand;
    Events events;
    if (ze_result_t r = events_of(signal, waits, &events); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(mu_);
    ++submitted_;
    if (to.placement == hal::Placement::other_host)
        return device_->check(pageable_locked(dst, to, nullptr, to, pattern, pattern_size, size, events));
    return device_->check(api_.zeCommandListAppendMemoryFill(list_, dst, pattern, pattern_size, size, events.signal,
                                                             static_cast<uint32_t>(events.waits.size()),
                                                             events.waits.data()));
}

ze_result_t ZeQueue::do_append_barrier(const hal::EventRef& signal, std::span<const hal::EventRef> waits) {
    Events events;
    if (ze_result_t r = events_of(signal, waits, &events); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(mu_);
    ++submitted_;
    return device_->check(api_.zeCommandListAppendBarrier(
        list_, events.signal, static_cast<uint32_t>(events.waits.size()), events.waits.data()));
}

ze_result_t ZeQueue::do_append_event_reset(const hal::EventRef& event) {
    auto* e = static_cast<ZeEvent*>(event.get());
    std::lock_guard lock(mu_);
    ++submitted_;
    return device_->check(api_.zeCommandListAppendEventReset(list_, e->handle()));
}

ze_result_t ZeQueue::do_append_write_global_timestamp(uint64_t* dst, hal::PlacedOperand& to,
                                                      const hal::EventRef& signal,
                                                      std::span<const hal::EventRef> waits) {
    if (to.operand.placement == hal::Placement::other_host) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    Events events;
    if (ze_result_t r = events_of(signal, waits, &events); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(mu_);
    ++submitted_;
    return device_->check(api_.zeCommandListAppendWriteGlobalTimestamp(
        list_, dst, events.signal, static_cast<uint32_t>(events.waits.size()), events.waits.data()));
}

ze_result_t ZeQueue::do_append_query_kernel_timestamps(std::span<const hal::EventRef> events, void* dst,
                                                       const size_t* offsets, std::span<const hal::Operand> placed,
                                                       const hal::EventRef& signal,
                                                       std::span<const hal::EventRef> waits) {
    if (events.size() > UINT32_MAX) return ZE_RESULT_ERROR_INVALID_SIZE;
    for (const hal::Operand& to : placed)
        if (to.placement == hal::Placement::other_host) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    std::vector<ze_event_handle_t> queried;
    Events evs;
    try {
        queried.reserve(events.size());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (const hal::EventRef& e : events) queried.push_back(static_cast<ZeEvent*>(e.get())->handle());
    if (ze_result_t r = events_of(signal, waits, &evs); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(mu_);
    ++submitted_;
    return device_->check(api_.zeCommandListAppendQueryKernelTimestamps(
        list_, static_cast<uint32_t>(queried.size()), queried.data(), dst, offsets, evs.signal,
        static_cast<uint32_t>(evs.waits.size()), evs.waits.data()));
}

ze_result_t ZeQueue::do_host_synchronize(uint64_t timeout_ns) {
    if (ZeCommandListHostSynchronizeFn sync = device_->driver().list_host_synchronize) {
        const ze_result_t r = sync(list_, timeout_ns);
        if (r != ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) return device_->check(r);
    }
    // A barrier signalling sync_event_ completes after everything submitted before it. A
    // barrier of an earlier call that timed out is waited for first (the list is in order,
    // so it completes first), then the event is reused; with nothing submitted since the
    // last barrier that completed, the list is idle.
    std::lock_guard sync_lock(sync_mu_);
    const uint64_t deadline = timeout_ns == kWaitForever ? kWaitForever : host_now_ns() + timeout_ns;
    auto left = [&] {
        if (deadline == kWaitForever) return kWaitForever;
        const uint64_t now = host_now_ns();
        return now >= deadline ? uint64_t{0} : deadline - now;
    };
    if (sync_pending_) {
        if (ze_result_t r = api_.zeEventHostSynchronize(sync_event_, left()); r != ZE_RESULT_SUCCESS)
            return device_->check(r);
        sync_pending_ = false;
        synced_ = pending_mark_;
    }
    {
        std::lock_guard lock(mu_);
        if (submitted_ == synced_) return ZE_RESULT_SUCCESS;
        ze_result_t r = api_.zeEventHostReset(sync_event_);
        if (r == ZE_RESULT_SUCCESS) r = api_.zeCommandListAppendBarrier(list_, sync_event_, 0, nullptr);
        if (r != ZE_RESULT_SUCCESS) return device_->check(r);
        pending_mark_ = ++submitted_;
        sync_pending_ = true;
    }
    const ze_result_t r = api_.zeEventHostSynchronize(sync_event_, left());
    if (r == ZE_RESULT_SUCCESS) {
        sync_pending_ = false;
        synced_ = pending_mark_;
    }
    return device_->check(r);
}

}  // namespace zehal::level_zero
