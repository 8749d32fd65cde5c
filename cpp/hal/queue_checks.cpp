#include "hal/queue_checks.hpp"

#include <new>
#include <utility>

#include "hal/device.hpp"

namespace zehal::hal {

namespace {

bool overlap(const void* a, const void* b, size_t size) noexcept {
    const auto x = reinterpret_cast<uintptr_t>(a);
    const auto y = reinterpret_cast<uintptr_t>(b);
    return x < y + size && y < x + size;
}

// A null event is INVALID_NULL_HANDLE, one the device's commands may not signal
// INVALID_ARGUMENT: the events a command may signal are those it may reset, query or take
// back (its own, and where the backend can another device's: Device::signals_event).
ze_result_t check_event(const CommandTarget& target, const EventRef& event) noexcept {
    if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return target.signals_event(*event) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

ze_result_t place(CommandTarget& target, const void* p, size_t size, OperandUse use, PlacedOperand* out) {
    return target.find_operand(p, size, use, &out->operand, &out->hold);
}

// The pointer arguments of a launch's snapshot, placed into placed->pointers.
ze_result_t place_pointers(CommandTarget& target, const Kernel& kernel, PlacedLaunch* placed) {
    const std::vector<KernelArg>& sig = kernel.properties().args;
    try {
        placed->pointers.resize(sig.size());
    } catch (const std::bad_alloc&) {
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    for (size_t i = 0; i < sig.size(); ++i) {
        if (sig[i].kind != KernelArgKind::global && sig[i].kind != KernelArgKind::constant) continue;
        const void* p = placed->args.pointer(i);
        if (!p) continue;
        if (ze_result_t r = place(target, p, 1, OperandUse::read, &placed->pointers[i]); r != ZE_RESULT_SUCCESS)
            return r;
    }
    return ZE_RESULT_SUCCESS;
}

}  // namespace

PlacedOperand::PlacedOperand(PlacedOperand&& other) noexcept
    : operand(std::move(other.operand)),
      hold(std::exchange(other.hold, nullptr)) {}

PlacedOperand& PlacedOperand::operator=(PlacedOperand&& other) noexcept {
    if (this != &other) {
        PointerRegistry::release(hold);
        operand = std::move(other.operand);
        hold = std::exchange(other.hold, nullptr);
    }
    return *this;
}

PointerRegistry::InFlight* PlacedOperand::take_hold() noexcept { return std::exchange(hold, nullptr); }

ze_result_t DeviceTarget::find_operand(const void* p, size_t size, OperandUse, Operand*,
                                       PointerRegistry::InFlight** held) {
    if (held) *held = nullptr;
    return device_.check_operand(p, size);
}

bool DeviceTarget::waits_for_event(const Event& event) const noexcept { return device_.waits_for_event(event); }

bool DeviceTarget::signals_event(const Event& event) const noexcept { return device_.signals_event(event); }

const DeviceProperties& DeviceTarget::properties() const noexcept { return device_.properties(); }

ze_result_t check_events(const CommandTarget& target, const EventRef& signal, std::span<const EventRef> waits) {
    if (signal && !target.signals_event(*signal)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (const EventRef& w : waits) {
        if (!w) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!target.waits_for_event(*w)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t check_copy(CommandTarget& target, void* dst, const void* src, size_t size, const EventRef& signal,
                       std::span<const EventRef> waits, PlacedOperand* to, PlacedOperand* from) {
    if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (ze_result_t r = place(target, dst, size, OperandUse::write, to); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = place(target, src, size, OperandUse::read, from); r != ZE_RESULT_SUCCESS) return r;
    if (overlap(dst, src, size)) return ZE_RESULT_ERROR_OVERLAPPING_REGIONS;
    return check_events(target, signal, waits);
}

ze_result_t check_fill(CommandTarget& target, void* dst, const void* pattern, size_t pattern_size, size_t size,
                       const EventRef& signal, std::span<const EventRef> waits, PlacedOperand* to) {
    if (!dst || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0 || !valid_fill_pattern_size(pattern_size) || size % pattern_size != 0)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    if (ze_result_t r = place(target, dst, size, OperandUse::write, to); r != ZE_RESULT_SUCCESS) return r;
    return check_events(target, signal, waits);
}

ze_result_t check_barrier(const CommandTarget& target, const EventRef& signal, std::span<const EventRef> waits) {
    return check_events(target, signal, waits);
}

ze_result_t check_event_reset(const CommandTarget& target, const EventRef& event) { return check_event(target, event); }

ze_result_t check_write_global_timestamp(CommandTarget& target, uint64_t* dst, const EventRef& signal,
                                         std::span<const EventRef> waits, PlacedOperand* to) {
    if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (reinterpret_cast<uintptr_t>(dst) % alignof(uint64_t)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (ze_result_t r = place(target, dst, sizeof *dst, OperandUse::write, to); r != ZE_RESULT_SUCCESS) return r;
    return check_events(target, signal, waits);
}

ze_result_t check_query_kernel_timestamps(CommandTarget& target, std::span<const EventRef> events, void* dst,
                                          const size_t* offsets, const EventRef& signal,
                                          std::span<const EventRef> waits, std::span<Operand> placed) {
    if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (events.empty()) return ZE_RESULT_ERROR_INVALID_SIZE;
    constexpr size_t kResult = sizeof(KernelTimestampResult);
    for (size_t i = 0; i < events.size(); ++i) {
        if (ze_result_t r = check_event(target, events[i]); r != ZE_RESULT_SUCCESS) return r;
        if (!(events[i]->pool().flags() & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp)))
            return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        const size_t offset = offsets ? offsets[i] : i * kResult;
        const void* at = reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(dst) + offset);
        Operand here;
        Operand* out = placed.empty() ? &here : &placed[i];
        if (ze_result_t r = target.find_operand(at, kResult, OperandUse::write, out, nullptr); r != ZE_RESULT_SUCCESS)
            return r;
    }
    return check_events(target, signal, waits);
}

ze_result_t check_launch(CommandTarget& target, Kernel& kernel, const GroupCount& groups, const EventRef& signal,
                         std::span<const EventRef> waits, PlacedLaunch* placed) {
    if (!target.owns_kernel(kernel)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (ze_result_t r = check_group_count(groups, target.properties()); r != ZE_RESULT_SUCCESS) return r;
    if (placed)
        if (ze_result_t r = check_launch_arguments(target, kernel, placed); r != ZE_RESULT_SUCCESS) return r;
    return check_events(target, signal, waits);
}

ze_result_t check_launch_indirect(CommandTarget& target, std::span<const KernelRef> kernels, const GroupCount* groups,
                                  const uint32_t* count, const EventRef& signal, std::span<const EventRef> waits,
                                  PlacedIndirectLaunch* placed) {
    if (kernels.empty()) return ZE_RESULT_ERROR_INVALID_SIZE;
    for (const KernelRef& kernel : kernels) {
        if (!kernel) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!target.owns_kernel(*kernel)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    if (!groups || (!count && kernels.size() > 1)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (reinterpret_cast<uintptr_t>(groups) % alignof(uint32_t) ||
        reinterpret_cast<uintptr_t>(count) % alignof(uint32_t))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // Refused where the backend cannot read the counts in queue order, at append (so a
    // regular list records nothing its execution would refuse), once the arguments passed.
    if (!target.properties().indirect_launches) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    PlacedIndirectLaunch unplaced;
    PlacedIndirectLaunch& out = placed ? *placed : unplaced;
    if (placed) {
        try {
            out.launches.resize(kernels.size());
        } catch (const std::bad_alloc&) {
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        for (size_t i = 0; i < kernels.size(); ++i)
            if (ze_result_t r = check_launch_arguments(target, *kernels[i], &out.launches[i]); r != ZE_RESULT_SUCCESS)
                return r;
    }
    if (ze_result_t r = place(target, groups, kernels.size() * sizeof(GroupCount), OperandUse::read, &out.groups);
        r != ZE_RESULT_SUCCESS)
        return r;
    if (count)
        if (ze_result_t r = place(target, count, sizeof *count, OperandUse::read, &out.count); r != ZE_RESULT_SUCCESS)
            return r;
    return check_events(target, signal, waits);
}

ze_result_t check_launch_arguments(CommandTarget& target, const Kernel& kernel, PlacedLaunch* placed) {
    const auto* state = dynamic_cast<const KernelState*>(&kernel);
    if (!state) return ZE_RESULT_SUCCESS;
    if (ze_result_t r = state->snapshot(&placed->args); r != ZE_RESULT_SUCCESS) return r;
    placed->snapshot = true;
    return place_pointers(target, kernel, placed);
}

ze_result_t check_cancel(const CommandTarget& target, const EventRef& signal) { return check_event(target, signal); }

}  // namespace zehal::hal
