#include "hal/level_zero/level_zero_event.hpp"

#include <new>

#include "hal/level_zero/ext_types.hpp"

namespace zehal::level_zero {

namespace {
constexpr uint32_t kTimestampFlags = hal::kPoolKernelTimestamp | hal::kPoolKernelMappedTimestamp;
// The hal's pool flags are passed on as they are.
static_assert(uint32_t{hal::kPoolHostVisible} == uint32_t{ZE_EVENT_POOL_FLAG_HOST_VISIBLE});
static_assert(uint32_t{hal::kPoolKernelTimestamp} == uint32_t{ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP});
static_assert(hal::kPoolKernelMappedTimestamp == kEventPoolFlagKernelMappedTimestamp);
}  // namespace

ze_result_t ZeEventPool::create(const std::shared_ptr<ZeDevice>& device, uint32_t count, uint32_t flags,
                                std::shared_ptr<hal::EventPool>* out) {
    if (count > kMaxEvents) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    // The hal's pool flags are Level Zero's values; every hal event is host-visible. IPC
    // pools are not shared by zehal, so the flag is kept but not passed on.
    ze_event_pool_desc_t desc{};
    desc.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC;
    desc.flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (flags & kTimestampFlags);
    desc.count = count;
    ze_device_handle_t handle = device->handle();
    ze_event_pool_handle_t pool = nullptr;
    if (ze_result_t r = device->api().zeEventPoolCreate(device->driver().context, &desc, 1, &handle, &pool);
        r != ZE_RESULT_SUCCESS)
        return device->check(r);
    try {
        *out = std::make_shared<ZeEventPool>(device, count, flags, pool);
    } catch (const std::bad_alloc&) {
        device->api().zeEventPoolDestroy(pool);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

ZeEventPool::ZeEventPool(std::shared_ptr<ZeDevice> device, uint32_t count, uint32_t flags,
                         ze_event_pool_handle_t handle)
    : device_(std::move(device)),
      count_(count),
      flags_(flags),
      handle_(handle),
      events_(count) {}

ZeEventPool::~ZeEventPool() {
    const ZeApi& api = device_->api();
    for (const auto& e : events_)
        if (e) api.zeEventDestroy(e->handle());
    api.zeEventPoolDestroy(handle_);
}

ze_result_t ZeEventPool::event(uint32_t index, hal::EventRef* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (index >= count_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::lock_guard lock(mu_);
    if (!events_[index]) {
        ze_event_desc_t desc{};
        desc.stype = ZE_STRUCTURE_TYPE_EVENT_DESC;
        desc.index = index;
        desc.signal = ZE_EVENT_SCOPE_FLAG_HOST;  // results visible to the host once signalled
        desc.wait = ZE_EVENT_SCOPE_FLAG_HOST;
        ze_event_handle_t handle = nullptr;
        if (ze_result_t r = device_->api().zeEventCreate(handle_, &desc, &handle); r != ZE_RESULT_SUCCESS)
            return device_->check(r);
        events_[index] = std::make_unique<ZeEvent>(this, handle);
    }
    // Aliasing constructor: the event shares ownership of its pool.
    *out = hal::EventRef(shared_from_this(), events_[index].get());
    return ZE_RESULT_SUCCESS;
}

ZeDevice& ZeEvent::device() const noexcept { return pool_->device(); }

hal::EventPool& ZeEvent::pool() { return *pool_; }

ze_result_t ZeEvent::query() {
    if (device().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return device().check(device().api().zeEventQueryStatus(handle_));
}

ze_result_t ZeEvent::host_synchronize(uint64_t timeout_ns) {
    if (device().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    // Level Zero's timeout has the hal's meaning: UINT64_MAX waits forever, 0 queries.
    return device().check(device().api().zeEventHostSynchronize(handle_, timeout_ns));
}

ze_result_t ZeEvent::host_signal() {
    if (device().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return device().check(device().api().zeEventHostSignal(handle_));
}

ze_result_t ZeEvent::host_reset() {
    if (device().lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return device().check(device().api().zeEventHostReset(handle_));
}

ze_result_t ZeEvent::query_kernel_timestamps(uint32_t* count, hal::KernelTimestampResult* out) {
    ZeDevice& dev = device();
    if (dev.lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!(pool_->flags() & kTimestampFlags)) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (*count != 0 && !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZeEventQueryKernelTimestampsExtFn ext = dev.driver().query_timestamps_ext) {
        KernelTimestampsExtResults results{};
        results.ticks = reinterpret_cast<ze_kernel_timestamp_result_t*>(out);
        return dev.check(ext(handle_, dev.handle(), count, &results));
    }
    // The core query: one packet, once the event is signalled.
    if (ze_result_t r = dev.check(dev.api().zeEventQueryStatus(handle_)); r != ZE_RESULT_SUCCESS) return r;
    if (*count == 0) {
        *count = 1;
        return ZE_RESULT_SUCCESS;
    }
    ze_kernel_timestamp_result_t packet{};
    if (ze_result_t r = dev.check(dev.api().zeEventQueryKernelTimestamp(handle_, &packet)); r != ZE_RESULT_SUCCESS)
        return r;
    out[0] = {packet.global.kernelStart, packet.global.kernelEnd, packet.context.kernelStart, packet.context.kernelEnd};
    *count = 1;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ZeEvent::query_synchronized_timestamps(uint32_t* count, hal::KernelTimestampResult* out) {
    ZeDevice& dev = device();
    if (dev.lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!(pool_->flags() & hal::kPoolKernelMappedTimestamp)) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (*count != 0 && !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ZeEventQueryKernelTimestampsExtFn ext = dev.driver().query_timestamps_ext;
    if (!ext) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;  // pools of this kind are refused without it
    KernelTimestampsExtResults results{};
    results.synchronized = out;
    return dev.check(ext(handle_, dev.handle(), count, &results));
}

ZeEvent* ze_event_of(const hal::EventRef& event, const ZeDevice& device) noexcept {
    auto* e = dynamic_cast<ZeEvent*>(event.get());
    if (!e || &e->device() != &device) return nullptr;
    return e;
}

}  // namespace zehal::level_zero
