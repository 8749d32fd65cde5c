#include "command_list.hpp"

#include <limits>

#include "hal/queue_checks.hpp"

namespace zehal::ze_driver {
namespace {

constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

// A marker of a fresh slot of its streamer: each run of the command is a marker of its own.
ze_result_t run_marker(const Command& c, hal::Queue& queue) {
    if (!c.streamer) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    metrics::Streamer::MarkerSlot slot;
    if (ze_result_t r = c.streamer->add_marker(c.marker_value, &slot); r != ZE_RESULT_SUCCESS) return r;
    const ze_result_t r = queue.append_write_global_timestamp(slot.ticks, slot.landed, {});
    if (r != ZE_RESULT_SUCCESS) c.streamer->drop_marker(slot);
    return r;
}

}  // namespace

ze_result_t check(const Command& c, const hal::Device& device) {
    // The queue's own rules (hal/queue_checks.hpp), with the device's operand rule.
    hal::DeviceTarget target(device);
    hal::PlacedOperand to;
    hal::PlacedOperand from;
    switch (c.kind) {
        case Command::Kind::copy:
            return hal::check_copy(target, c.dst, c.src, c.size, c.signal, c.waits, &to, &from);
        case Command::Kind::fill:
            return hal::check_fill(target, c.dst, c.pattern.data(), c.pattern.size(), c.size, c.signal, c.waits, &to);
        case Command::Kind::barrier:
            return hal::check_barrier(target, c.signal, c.waits);
        case Command::Kind::reset:
            return hal::check_event_reset(target, c.reset_event);
        case Command::Kind::write_timestamp:
            return hal::check_write_global_timestamp(target, static_cast<uint64_t*>(c.dst), c.signal, c.waits, &to);
        case Command::Kind::query_timestamps:
            // The list keeps one offset per queried event, or none (packed results).
            if (!c.offsets.empty() && c.offsets.size() != c.queried.size()) return ZE_RESULT_ERROR_INVALID_SIZE;
            return hal::check_query_kernel_timestamps(
                target, c.queried, c.dst, c.offsets.empty() ? nullptr : c.offsets.data(), c.signal, c.waits, {});
        case Command::Kind::launch:
            // The kernel's arguments were checked as they were set (KernelObject).
            if (!c.kernel) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
            return hal::check_launch(target, *c.kernel, c.groups, c.signal, c.waits, nullptr);
        case Command::Kind::launch_indirect:
            return hal::check_launch_indirect(target, c.kernels, c.indirect_groups, c.indirect_count, c.signal, c.waits,
                                              nullptr);
        case Command::Kind::streamer_marker:
            return c.streamer ? c.streamer->can_mark() : ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    }
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
}

ze_result_t run(const Command& c, hal::Queue& queue) {
    switch (c.kind) {
        case Command::Kind::copy:
            return queue.append_copy(c.dst, c.src, c.size, c.signal, c.waits);
        case Command::Kind::fill:
            return queue.append_fill(c.dst, c.pattern.data(), c.pattern.size(), c.size, c.signal, c.waits);
        case Command::Kind::barrier:
            return queue.append_barrier(c.signal, c.waits);
        case Command::Kind::reset:
            return queue.append_event_reset(c.reset_event);
        case Command::Kind::write_timestamp:
            return queue.append_write_global_timestamp(static_cast<uint64_t*>(c.dst), c.signal, c.waits);
        case Command::Kind::query_timestamps:
            return queue.append_query_kernel_timestamps(
                c.queried, c.dst, c.offsets.empty() ? nullptr : c.offsets.data(), c.signal, c.waits);
        case Command::Kind::launch:
            return queue.append_launch(*c.kernel, c.groups, c.signal, c.waits);
        case Command::Kind::launch_indirect:
            return queue.append_launch_indirect(c.kernels, c.indirect_groups, c.indirect_count, c.signal, c.waits);
        case Command::Kind::streamer_marker:
            return run_marker(c, queue);
    }
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
}

ze_result_t execute(std::span<const Recorded> lists, hal::Queue& queue, const hal::Device& device) {
    for (const Recorded& commands : lists)
        for (const Command& c : *commands)
            if (ze_result_t r = check(c, device); r != ZE_RESULT_SUCCESS) return r;
    for (const Recorded& commands : lists)
        for (const Command& c : *commands)
            if (ze_result_t r = run(c, queue); r != ZE_RESULT_SUCCESS) return r;
    return ZE_RESULT_SUCCESS;
}

CommandListObject::CommandListObject(ze_context_handle_t context, DeviceObject* device,
                                     std::shared_ptr<hal::Queue> queue, bool synchronous)
    : context_(context),
      device_(device),
      queue_(std::move(queue)),
      ordinal_(queue_->ordinal()),
      synchronous_(synchronous) {}

CommandListObject::CommandListObject(ze_context_handle_t context, DeviceObject* device, uint32_t ordinal)
    : context_(context),
      device_(device),
      ordinal_(ordinal) {}

ze_result_t CommandListObject::append(Command&& command) {
    if (queue_) {
        if (ze_result_t r = run(command, *queue_); r != ZE_RESULT_SUCCESS || !synchronous_) return r;
        // The specification's synchronous mode blocks the host until the device is done, so
        // a command behind an event the host has not signalled blocks the append with it.
        return queue_->host_synchronize(kForever);
    }
    // Checked now, as an immediate list's queue would: a bad operand is the append's error,
    // never an execution's.
    if (ze_result_t r = check(command, *device_->device); r != ZE_RESULT_SUCCESS) return r;
    std::lock_guard lock(mu_);
    if (closed_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    open_.push_back(std::move(command));
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::close() {
    if (queue_) return ZE_RESULT_SUCCESS;
    std::lock_guard lock(mu_);
    if (!closed_) closed_ = std::make_shared<const std::vector<Command>>(std::move(open_));
    open_.clear();
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::reset() {
    // An immediate list holds nothing: its commands belong to its queue, which runs them.
    if (queue_) return ZE_RESULT_SUCCESS;
    std::lock_guard lock(mu_);
    open_.clear();
    closed_.reset();  // executions still running keep their own reference
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::recorded(Recorded* out) {
    std::lock_guard lock(mu_);
    if (!closed_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = closed_;
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::host_synchronize(uint64_t timeout_ns) {
    if (!queue_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return queue_->host_synchronize(timeout_ns);
}

}  // namespace zehal::ze_driver
