// The argument rules of each queue command (hal/queue.hpp states them in words), coded
// once. Queue's appends run them before a backend sees a command; a recorded command list
// (the Level Zero driver's) runs them when a command is recorded, before any queue exists.
//
// Where a rule belongs: which memory a command may touch is hal::find_operand's rule
// (hal/host_memory.hpp), reached through CommandTarget::find_operand; the rules of a
// command's other arguments are its check_<command> here. A new command adds a
// check_<command> here, an append_<command> to hal::Queue that runs it, and a
// do_append_<command> hook that each backend implements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/event.hpp"
#include "hal/host_memory.hpp"
#include "hal/kernel_state.hpp"
#include "hal/module.hpp"
#include "hal/pointer_registry.hpp"
#include "hal/types.hpp"
#include "hal/virtual_memory.hpp"

namespace zehal::hal {

class Device;

// The device a command is checked for: what the rules ask of it.
class CommandTarget {
public:
    // Places the operand [p, p + size) that a command reads or writes (`use`; a range of the
    // device's virtual memory must be mapped with an access that allows it) by
    // hal::find_operand's rule, as the device's queues do: SUCCESS with *out (a peer's memory
    // with its owner in out->peer, kept alive while *out is), or the rule's error
    // (INVALID_SIZE, INVALID_ARGUMENT; DEVICE_LOST for a lost peer's memory). With `held`,
    // the target may also hold the operand's allocation for as long as the command may touch
    // it (*held, released with PointerRegistry::release); a target that holds nothing leaves
    // *held null.
    virtual ze_result_t find_operand(const void* p, size_t size, OperandUse use, Operand* out,
                                     PointerRegistry::InFlight** held) = 0;
    // True when the device's commands may wait for `event` (Device::waits_for_event).
    virtual bool waits_for_event(const Event& event) const noexcept = 0;
    // True when the device's commands may signal `event`, and so reset, query its kernel
    // timestamps or take back the command that signals it (Device::signals_event).
    virtual bool signals_event(const Event& event) const noexcept = 0;
    // True when `kernel` is a kernel of a module of the device.
    virtual bool owns_kernel(const Kernel& kernel) const noexcept = 0;
    // The device's properties (the launch limits).
    virtual const DeviceProperties& properties() const noexcept = 0;

protected:
    ~CommandTarget() = default;
};

// A device as the target of a command recorded for it, before any queue runs it: operands
// are checked with Device::check_operand (placed as the queues place them for reading,
// none held, *out left as it was). A recorded launch's kernel was matched to the device
// when it was recorded: every kernel counts as the device's.
class DeviceTarget final : public CommandTarget {
public:
    explicit DeviceTarget(const Device& device) noexcept : device_(device) {}
    ze_result_t find_operand(const void* p, size_t size, OperandUse use, Operand* out,
                             PointerRegistry::InFlight** held) override;
    bool waits_for_event(const Event& event) const noexcept override;
    bool signals_event(const Event& event) const noexcept override;
    bool owns_kernel(const Kernel&) const noexcept override { return true; }
    const DeviceProperties& properties() const noexcept override;

private:
    const Device& device_;
};

// One operand of a command as its target placed it, and the hold taken on its allocation
// (null when none was taken). The hold is released with this object unless the backend
// took it over (take_hold).
struct PlacedOperand {
    Operand operand;
    PointerRegistry::InFlight* hold = nullptr;

    PlacedOperand() = default;
    PlacedOperand(PlacedOperand&& other) noexcept;
    PlacedOperand& operator=(PlacedOperand&& other) noexcept;
    ~PlacedOperand() { PointerRegistry::release(hold); }

    // Hands the hold over to the caller (who releases it once the command is over).
    PointerRegistry::InFlight* take_hold() noexcept;
};

// A launch's arguments as the queue checked them: a snapshot of a KernelState kernel's
// arguments, and each pointer argument placed (`pointers[i]` for argument i; an empty
// operand for other arguments and null pointers). A kernel that keeps its arguments
// elsewhere (in a driver) has none (`snapshot` false).
struct PlacedLaunch {
    bool snapshot = false;
    LaunchSnapshot args;
    std::vector<PlacedOperand> pointers;
};

// An indirect launch as the queue checked it: the group counts and the kernel count placed
// (held), and each kernel's launch (PlacedLaunch, in the order of the kernels).
struct PlacedIndirectLaunch {
    PlacedOperand groups;
    PlacedOperand count;
    std::vector<PlacedLaunch> launches;
};

// The largest fill pattern, in bytes.
inline constexpr size_t kMaxFillPattern = 128;

// True when a fill may repeat a pattern of `pattern_size` bytes: a power of two up to
// kMaxFillPattern.
constexpr bool valid_fill_pattern_size(size_t pattern_size) noexcept {
    return pattern_size != 0 && pattern_size <= kMaxFillPattern && (pattern_size & (pattern_size - 1)) == 0;
}

// Each check returns SUCCESS or the first error the rules of hal/queue.hpp name, in this
// order: null pointers, sizes, operands (by find_operand), overlap, then the events (the
// signal event, which must be the device's; each wait event: null INVALID_NULL_HANDLE,
// one the device cannot wait for INVALID_ARGUMENT). A device's loss is the queue's to
// check (Queue::lost).

// The signal and wait events of any command.
ze_result_t check_events(const CommandTarget& target, const EventRef& signal, std::span<const EventRef> waits);
// A copy: null dst or src, size 0, the destination (written) and the source (read),
// overlapping ranges; *to and *from placed.
ze_result_t check_copy(CommandTarget& target, void* dst, const void* src, size_t size, const EventRef& signal,
                       std::span<const EventRef> waits, PlacedOperand* to, PlacedOperand* from);
// A fill: null dst or pattern; size 0, a pattern size not valid_fill_pattern_size or not
// dividing `size` (INVALID_SIZE); the destination; *to placed.
ze_result_t check_fill(CommandTarget& target, void* dst, const void* pattern, size_t pattern_size, size_t size,
                       const EventRef& signal, std::span<const EventRef> waits, PlacedOperand* to);
// A barrier: its events only.
ze_result_t check_barrier(const CommandTarget& target, const EventRef& signal, std::span<const EventRef> waits);
// An event reset: a null event (INVALID_NULL_HANDLE), one the device may not signal.
ze_result_t check_event_reset(const CommandTarget& target, const EventRef& event);
// A global timestamp write: null dst, dst not 8-byte aligned (INVALID_ARGUMENT), the
// destination word; *to placed.
ze_result_t check_write_global_timestamp(CommandTarget& target, uint64_t* dst, const EventRef& signal,
                                         std::span<const EventRef> waits, PlacedOperand* to);
// A kernel timestamp query: null dst, no events (INVALID_SIZE); then for each queried
// event: null (INVALID_NULL_HANDLE), of another device, of a pool without a kernel
// timestamp flag (UNSUPPORTED_FEATURE), its result's place (dst + offsets[i], or packed
// when `offsets` is null). `placed` is empty, or has room for one Operand per event: the
// results' places, none held (they may be many; their memory is the caller's to keep).
ze_result_t check_query_kernel_timestamps(CommandTarget& target, std::span<const EventRef> events, void* dst,
                                          const size_t* offsets, const EventRef& signal,
                                          std::span<const EventRef> waits, std::span<Operand> placed);
// A launch: a kernel of another device (INVALID_ARGUMENT), a group count of zero or over
// the device's max_group_count (INVALID_GROUP_SIZE_DIMENSION); with `placed`, the
// arguments of a KernelState kernel (KernelState::snapshot: unset, too much __local memory)
// and each pointer argument that is not null, an operand of the launch (at least its first
// byte; read: a kernel's extent is its own business), placed and held into *placed.
ze_result_t check_launch(CommandTarget& target, Kernel& kernel, const GroupCount& groups, const EventRef& signal,
                         std::span<const EventRef> waits, PlacedLaunch* placed);
// An indirect launch: no kernels (INVALID_SIZE), a null kernel (INVALID_NULL_HANDLE), a
// kernel of another device (INVALID_ARGUMENT), null `groups` or, with several kernels,
// null `count` (INVALID_NULL_POINTER), `groups` or `count` not 4-byte aligned
// (INVALID_ARGUMENT); with `placed`, each kernel's arguments as check_launch places them;
// the group counts (kernels.size() of them) and the count, both read, placed and held into
// *placed when given.
ze_result_t check_launch_indirect(CommandTarget& target, std::span<const KernelRef> kernels, const GroupCount* groups,
                                  const uint32_t* count, const EventRef& signal, std::span<const EventRef> waits,
                                  PlacedIndirectLaunch* placed);
// The arguments of a launch of `kernel` as check_launch checks and places them into *placed
// (nothing for a kernel that is not a KernelState): for a kernel whose launch is recorded
// before any queue runs it.
ze_result_t check_launch_arguments(CommandTarget& target, const Kernel& kernel, PlacedLaunch* placed);
// A cancel: a null event (INVALID_NULL_HANDLE), one the device may not signal.
ze_result_t check_cancel(const CommandTarget& target, const EventRef& signal);

}  // namespace zehal::hal
