#include "command_list.hpp"

#include <cstring>
#include <limits>

namespace zehal::ze_driver {
namespace {

constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();

// Every command before this point on `queue` (and `waits`) completed.
ze_result_t drain(hal::Queue& queue, std::span<const hal::EventRef> waits) {
    if (ze_result_t r = queue.append_barrier(nullptr, waits); r != ZE_RESULT_SUCCESS) return r;
    return queue.host_synchronize(kForever);
}

// Writes `size` bytes of host data to `dst`: directly into host-accessible memory, through
// a copy on `queue` from staging host memory of the device into device memory.
ze_result_t write_out(hal::Queue& queue, hal::Device& device, void* dst, const void* data, size_t size) {
    hal::PointerInfo info;
    if (ze_result_t r = device.pointer_info(dst, &info); r != ZE_RESULT_SUCCESS) return r;
    if (static_cast<const char*>(dst) + size > static_cast<const char*>(info.base) + info.size)
        return ZE_RESULT_ERROR_INVALID_SIZE;
    if (info.kind != hal::MemoryKind::device) {
        std::memcpy(dst, data, size);
        return ZE_RESULT_SUCCESS;
    }
    void* staging = nullptr;
    if (ze_result_t r = device.allocate(hal::MemoryKind::host, size, 0, 0, 0, &staging); r != ZE_RESULT_SUCCESS)
        return r;
    std::memcpy(staging, data, size);
    ze_result_t r = queue.append_copy(dst, staging, size, nullptr, {});
    if (r == ZE_RESULT_SUCCESS) r = queue.host_synchronize(kForever);
    device.free(staging);
    return r;
}

ze_result_t finish(const hal::EventRef& signal) { return signal ? signal->host_signal() : ZE_RESULT_SUCCESS; }

ze_result_t write_timestamp(const Command& c, hal::Queue& queue, hal::Device& device) {
    if (ze_result_t r = drain(queue, c.waits); r != ZE_RESULT_SUCCESS) return r;
    uint64_t host_ns = 0, ticks = 0;
    if (ze_result_t r = device.global_timestamps(&host_ns, &ticks); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = write_out(queue, device, c.dst, &ticks, sizeof ticks); r != ZE_RESULT_SUCCESS) return r;
    return finish(c.signal);
}

ze_result_t query_timestamps(const Command& c, hal::Queue& queue, hal::Device& device) {
    if (ze_result_t r = drain(queue, c.waits); r != ZE_RESULT_SUCCESS) return r;
    auto* base = static_cast<char*>(c.dst);
    for (size_t i = 0; i < c.queried.size(); ++i) {
        hal::KernelTimestampResult ts{};
        uint32_t count = 1;
        if (ze_result_t r = c.queried[i]->query_kernel_timestamps(&count, &ts); r != ZE_RESULT_SUCCESS) return r;
        const size_t offset = c.offsets.empty() ? i * sizeof ts : c.offsets[i];
        if (ze_result_t r = write_out(queue, device, base + offset, &ts, sizeof ts); r != ZE_RESULT_SUCCESS) return r;
    }
    return finish(c.signal);
}

}  // namespace

ze_result_t run(const Command& c, hal::Queue& queue, hal::Device& device) {
    switch (c.kind) {
    case Command::Kind::copy:
        return queue.append_copy(c.dst, c.src, c.size, c.signal, c.waits);
    case Command::Kind::fill:
        return queue.append_fill(c.dst, c.pattern.data(), c.pattern.size(), c.size, c.signal, c.waits);
    case Command::Kind::barrier:
        return queue.append_barrier(c.signal, c.waits);
    case Command::Kind::reset:
        if (ze_result_t r = drain(queue, c.waits); r != ZE_RESULT_SUCCESS) return r;
        return c.reset_event->host_reset();
    case Command::Kind::write_timestamp:
        return write_timestamp(c, queue, device);
    case Command::Kind::query_timestamps:
        return query_timestamps(c, queue, device);
    }
    return ZE_RESULT_ERROR_INVALID_ENUMERATION;
}

CommandListObject::CommandListObject(DeviceObject* device, std::shared_ptr<hal::Queue> queue)
    : device_(device), queue_(std::move(queue)), ordinal_(queue_->ordinal()) {}

CommandListObject::CommandListObject(DeviceObject* device, uint32_t ordinal) : device_(device), ordinal_(ordinal) {}

ze_result_t CommandListObject::append(Command&& command) {
    if (queue_) return run(command, *queue_, *device_->device);
    std::lock_guard lock(mu_);
    if (closed_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    commands_.push_back(std::move(command));
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::reset() {
    if (queue_) return queue_->host_synchronize(kForever);
    std::lock_guard lock(mu_);
    commands_.clear();
    closed_ = false;
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::execute_on(hal::Queue& queue) {
    std::lock_guard lock(mu_);
    if (!closed_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (const Command& c : commands_)
        if (ze_result_t r = run(c, queue, *device_->device); r != ZE_RESULT_SUCCESS) return r;
    return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListObject::host_synchronize(uint64_t timeout_ns) {
    if (!queue_) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return queue_->host_synchronize(timeout_ns);
}

}  // namespace zehal::ze_driver
