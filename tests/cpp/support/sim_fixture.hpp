// Helpers of the sim device tests: devices from a config, allocations, queues and events.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "common/clock.hpp"
#include "hal/device.hpp"
#include "hal/sim/sim_backend.hpp"

namespace zehal::test {

// A fresh sim device with `config`; fails the test when it cannot be made.
inline hal::DeviceRef sim_device(const sim::SimConfig& config = {}) {
    hal::DeviceRef d;
    EXPECT_EQ(sim::create_device(config, &d), ZE_RESULT_SUCCESS);
    return d;
}

// `size` bytes of `kind` memory of `d`, freed (and checked) when it goes.
class Memory {
public:
    Memory(const hal::DeviceRef& d, hal::MemoryKind kind, size_t size, size_t alignment = 0) : d_(d) {
        EXPECT_EQ(d->allocate(kind, size, alignment, 0, 0, &ptr_), ZE_RESULT_SUCCESS);
    }
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
    ~Memory() {
        if (!ptr_) return;
        const ze_result_t r = d_->free(ptr_);
        EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_DEVICE_LOST) << r;
    }
    template <typename T = unsigned char>
    T* get() const {
        return static_cast<T*>(ptr_);
    }
    void* ptr() const { return ptr_; }

private:
    hal::DeviceRef d_;
    void* ptr_ = nullptr;
};

inline std::shared_ptr<hal::Queue> queue(const hal::DeviceRef& d, uint32_t ordinal = hal::kCopyOrdinal,
                                         uint32_t index = 0) {
    std::shared_ptr<hal::Queue> q;
    EXPECT_EQ(d->create_queue(ordinal, index, &q), ZE_RESULT_SUCCESS);
    return q;
}

inline std::shared_ptr<hal::EventPool> pool(const hal::DeviceRef& d, uint32_t count,
                                            uint32_t flags = hal::kPoolHostVisible) {
    std::shared_ptr<hal::EventPool> p;
    EXPECT_EQ(d->create_event_pool(count, flags, &p), ZE_RESULT_SUCCESS);
    return p;
}

inline hal::EventRef event(const std::shared_ptr<hal::EventPool>& p, uint32_t index = 0) {
    hal::EventRef e;
    EXPECT_EQ(p->event(index, &e), ZE_RESULT_SUCCESS);
    return e;
}

// A timeout that only keeps a broken test from hanging.
inline constexpr uint64_t kHangGuardNs = 30'000'000'000ull;

}  // namespace zehal::test
