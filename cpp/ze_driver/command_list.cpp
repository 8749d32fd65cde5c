#include "command_list.hpp"

#include <limits>

namespace zehal::ze_driver {
namespace {

constexpr size_t kMaxPattern = 128;
constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

bool overlap(const void* a, const void* b, size_t size) {
    const auto x = reinterpret_cast<uintptr_t>(a);
    const auto y = reinterpret_cast<uintptr_t>(b);
    return x < y + size && y < x + size;
}

// The signal event and wait events of a command, as a queue of `device` checks them.
ze_result_t check_events(const Command& c, const hal::Device& device) {
    if (c.signal && !device.owns_event(*c.signal)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (const hal::EventRef& w : c.waits) {
        if (!w) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (!device.waits_for_event(*w)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    return ZE_RESULT_SUCCESS;
}

// The operands of a command, in the order a queue checks them.
ze_result_t check_operands(const Command& c, const hal::Device& device) {
    switch (c.kind) {
        case Command::Kind::copy:
            if (!c.dst || !c.src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            if (c.size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
            if (ze_result_t r = device.check_operand(c.dst, c.size); r != ZE_RESULT_SUCCESS) return r;
            if (ze_result_t r = device.check_operand(c.src, c.size); r != ZE_RESULT_SUCCESS) return r;
            return overlap(c.dst, c.src, c.size) ? ZE_RESULT_ERROR_OVERLAPPING_REGIONS : ZE_RESULT_SUCCESS;
        case Command::Kind::fill: {
            const size_t p = c.pattern.size();
            if (!c.dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            if (c.size == 0 || p == 0 || p > kMaxPattern || (p & (p - 1)) || c.size % p)
                return ZE_RESULT_ERROR_INVALID_SIZE;
            return device.check_operand(c.dst, c.size);
        }
        case Command::Kind::barrier:
            return ZE_RESULT_SUCCESS;
        case Command::Kind::reset:
            if (!c.reset_event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
            return device.owns_event(*c.reset_event) ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
        case Command::Kind::write_timestamp:
            if (!c.dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            if (reinterpret_cast<uintptr_t>(c.dst) % alignof(uint64_t)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
            return device.check_operand(c.dst, sizeof(uint64_t));
        case Command::Kind::query_timestamps:
            if (!c.dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
            if (c.queried.empty() || (!c.offsets.empty() && c.offsets.size() != c.queried.size()))
                return ZE_RESULT_ERROR_INVALID_SIZE;
            for (size_t i = 0; i < c.queried.size(); ++i) {
                const hal::EventRef& e = c.queried[i];
                if (!e) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
                if (!device.owns_event(*e)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
                if (!(e->pool().flags() & (hal::kPoolKernelTimestamp | hal::kPoolKernelMappedTimestamp)))
                    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
                const size_t offset = c.offsets.empty() ? i * sizeof(hal::KernelTimestampResult) : c.offsets[i];
                const void* at = reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(c.dst) + offset);
                if (ze_result_t r = device.check_operand(at, sizeof(hal::KernelTimestampResult));
                    r != ZE_RESULT_SUCCESS)
                    return r;
            }
            return ZE_RESULT_SUCCESS;
        case Command::Kind::launch:
            if (!c.kernel) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
            for (uint32_t n : c.groups)
                if (n == 0) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
            return ZE_RESULT_SUCCESS;
    }
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
}

}  // namespace

ze_result_t check(const Command& c, const hal::Device& device) {
    if (ze_result_t r = check_operands(c, device); r != ZE_RESULT_SUCCESS) return r;
    return check_events(c, device);
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

CommandListObject::CommandListObject(DeviceObject* device, std::shared_ptr<hal::Queue> queue, bool synchronous)
    : device_(device),
      queue_(std::move(queue)),
      ordinal_(queue_->ordinal()),
      synchronous_(synchronous) {}

CommandListObject::CommandListObject(DeviceObject* device, uint32_t ordinal) : device_(device), ordinal_(ordinal) {}

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
