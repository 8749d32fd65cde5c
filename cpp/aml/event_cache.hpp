// Recycled events for DMA requests, so that the hot path creates no event pool.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "zehal/ze_result.h"
#include "hal/device.hpp"

namespace zehal::aml {

// Host-visible events of one device, handed out and taken back. Pools are created on
// demand, each twice the size of the previous one (up to kMaxPoolSize). Thread-safe.
class EventCache {
public:
    explicit EventCache(hal::DeviceRef device) : device_(std::move(device)) {}

    // A not signalled event into *out; the device's error when a pool cannot be created.
    ze_result_t acquire(hal::EventRef* out);
    // Takes back an event no command will signal any more: reset, then kept for reuse
    // (dropped if the reset fails, as on a lost device).
    void release(hal::EventRef event);

private:
    static constexpr uint32_t kFirstPoolSize = 16;
    static constexpr uint32_t kMaxPoolSize = 1024;

    const hal::DeviceRef device_;
    std::mutex mutex_;
    std::vector<hal::EventRef> free_;           // guarded by mutex_
    uint32_t next_pool_size_ = kFirstPoolSize;  // guarded by mutex_
};

}  // namespace zehal::aml
