// Events of the level_zero backend: ze_event_handle_t of a ze_event_pool_handle_t created
// with the pool's flags (always host-visible), made on first use.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "hal/event.hpp"
#include "hal/level_zero/level_zero_device.hpp"

namespace zehal::level_zero {

class ZeEventPool;

// One event of a ZeEventPool.
class ZeEvent final : public hal::Event {
public:
    ZeEvent(ZeEventPool* pool, ze_event_handle_t handle) : pool_(pool), handle_(handle) {}

    ze_result_t query() override;
    ze_result_t host_synchronize(uint64_t timeout_ns) override;
    ze_result_t host_signal() override;
    ze_result_t host_reset() override;
    ze_result_t query_kernel_timestamps(uint32_t* count, hal::KernelTimestampResult* out) override;
    ze_result_t query_synchronized_timestamps(uint32_t* count, hal::KernelTimestampResult* out) override;
    hal::EventPool& pool() override;

    // --- for queues ---
    ZeDevice& device() const noexcept;
    ze_event_handle_t handle() const noexcept { return handle_; }

private:
    ZeEventPool* const pool_;
    const ze_event_handle_t handle_;
};

// A fixed number of events over one driver event pool.
class ZeEventPool final : public hal::EventPool, public std::enable_shared_from_this<ZeEventPool> {
public:
    // Most events one pool holds (as the other backends).
    static constexpr uint32_t kMaxEvents = 1u << 20;

    // A pool of `count` events with EventPoolFlag `flags` on `device`, as
    // hal::Device::create_event_pool checked them; UNSUPPORTED_SIZE above kMaxEvents.
    static ze_result_t create(const std::shared_ptr<ZeDevice>& device, uint32_t count, uint32_t flags,
                              std::shared_ptr<hal::EventPool>* out);
    ZeEventPool(std::shared_ptr<ZeDevice> device, uint32_t count, uint32_t flags, ze_event_pool_handle_t handle);
    ~ZeEventPool() override;

    uint32_t count() const override { return count_; }
    uint32_t flags() const override { return flags_; }
    ze_result_t event(uint32_t index, hal::EventRef* out) override;

    ZeDevice& device() const noexcept { return *device_; }

private:
    const std::shared_ptr<ZeDevice> device_;
    const uint32_t count_;
    const uint32_t flags_;
    const ze_event_pool_handle_t handle_;
    std::mutex mu_;                                 // guards events_
    std::vector<std::unique_ptr<ZeEvent>> events_;  // made on first use
};

// The ZeEvent behind `event` when it belongs to `device`; null for a null event, an event
// of another device or of another backend.
ZeEvent* ze_event_of(const hal::EventRef& event, const ZeDevice& device) noexcept;

}  // namespace zehal::level_zero
