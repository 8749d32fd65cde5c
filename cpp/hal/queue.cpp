#include "hal/queue.hpp"

#include <new>
#include <vector>

#include "hal/device.hpp"

namespace zehal::hal {

ze_result_t Queue::append_copy(void* dst, const void* src, size_t size, const EventRef& signal,
                               std::span<const EventRef> waits) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    PlacedOperand to;
    PlacedOperand from;
    if (ze_result_t r = check_copy(*this, dst, src, size, signal, waits, &to, &from); r != ZE_RESULT_SUCCESS) return r;
    return do_append_copy(dst, to, src, from, size, signal, waits);
}

ze_result_t Queue::append_fill(void* dst, const void* pattern, size_t pattern_size, size_t size, const EventRef& signal,
                               std::span<const EventRef> waits) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    PlacedOperand to;
    if (ze_result_t r = check_fill(*this, dst, pattern, pattern_size, size, signal, waits, &to); r != ZE_RESULT_SUCCESS)
        return r;
    return do_append_fill(dst, to, pattern, pattern_size, size, signal, waits);
}

ze_result_t Queue::append_barrier(const EventRef& signal, std::span<const EventRef> waits) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (ze_result_t r = check_barrier(*this, signal, waits); r != ZE_RESULT_SUCCESS) return r;
    return do_append_barrier(signal, waits);
}

ze_result_t Queue::append_event_reset(const EventRef& event) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (ze_result_t r = check_event_reset(*this, event); r != ZE_RESULT_SUCCESS) return r;
    return do_append_event_reset(event);
}

ze_result_t Queue::append_write_global_timestamp(uint64_t* dst, const EventRef& signal,
                                                 std::span<const EventRef> waits) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    PlacedOperand to;
    if (ze_result_t r = check_write_global_timestamp(*this, dst, signal, waits, &to); r != ZE_RESULT_SUCCESS) return r;
    return do_append_write_global_timestamp(dst, to, signal, waits);
}

ze_result_t Queue::append_query_kernel_timestamps(std::span<const EventRef> events, void* dst, const size_t* offsets,
                                                  const EventRef& signal, std::span<const EventRef> waits) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    std::vector<Operand> placed;
    try {
        placed.resize(events.size());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    if (ze_result_t r = check_query_kernel_timestamps(*this, events, dst, offsets, signal, waits, placed);
        r != ZE_RESULT_SUCCESS)
        return r;
    return do_append_query_kernel_timestamps(events, dst, offsets, placed, signal, waits);
}

ze_result_t Queue::append_launch(Kernel& kernel, const GroupCount& groups, const EventRef& signal,
                                 std::span<const EventRef> waits) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    PlacedLaunch launch;
    if (ze_result_t r = check_launch(*this, kernel, groups, signal, waits, &launch); r != ZE_RESULT_SUCCESS) return r;
    return do_append_launch(kernel, groups, launch, signal, waits);
}

ze_result_t Queue::append_launch_indirect(std::span<const KernelRef> kernels, const GroupCount* groups,
                                          const uint32_t* count, const EventRef& signal,
                                          std::span<const EventRef> waits) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    PlacedIndirectLaunch launch;
    if (ze_result_t r = check_launch_indirect(*this, kernels, groups, count, signal, waits, &launch);
        r != ZE_RESULT_SUCCESS)
        return r;
    return do_append_launch_indirect(kernels, groups, count, launch, signal, waits);
}

ze_result_t Queue::host_synchronize(uint64_t timeout_ns) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return do_host_synchronize(timeout_ns);
}

ze_result_t Queue::cancel(const EventRef& signal) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (ze_result_t r = check_cancel(*this, signal); r != ZE_RESULT_SUCCESS) return r;
    return do_cancel(signal);
}

ze_result_t Queue::do_cancel(const EventRef&) { return ZE_RESULT_NOT_READY; }

bool Queue::waits_for_event(const Event& event) const noexcept { return device().waits_for_event(event); }

bool Queue::signals_event(const Event& event) const noexcept { return device().signals_event(event); }

const DeviceProperties& Queue::properties() const noexcept { return device().properties(); }

}  // namespace zehal::hal
