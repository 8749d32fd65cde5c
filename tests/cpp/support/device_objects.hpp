// What the backend tests share around one device: allocations and event pools that clean up
// after themselves, and copies that wait.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "hal/device.hpp"

namespace zehal::test {

// A wait long enough for any command of these tests; only there to turn a hang into a failure.
inline constexpr uint64_t kHangGuardNs = 20'000'000'000ull;

// Frees what it holds when it goes.
struct Memory {
    hal::DeviceRef device;
    void* ptr = nullptr;
    Memory(const hal::DeviceRef& d, hal::MemoryKind kind, size_t size, size_t alignment = 0) : device(d) {
        EXPECT_EQ(device->allocate(kind, size, alignment, 0, 0, &ptr), ZE_RESULT_SUCCESS);
    }
    ~Memory() {
        if (ptr) {
            EXPECT_EQ(device->free(ptr), ZE_RESULT_SUCCESS);
        }
    }
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
    template <typename T = uint8_t>
    T* as() const {
        return static_cast<T*>(ptr);
    }
};

// A pool of `count` events with `flags` and its events.
struct Events {
    std::shared_ptr<hal::EventPool> pool;
    std::vector<hal::EventRef> events;
    Events(const hal::DeviceRef& d, uint32_t count, uint32_t flags = hal::kPoolHostVisible) {
        EXPECT_EQ(d->create_event_pool(count, flags, &pool), ZE_RESULT_SUCCESS);
        for (uint32_t i = 0; pool && i < count; ++i) {
            hal::EventRef e;
            EXPECT_EQ(pool->event(i, &e), ZE_RESULT_SUCCESS);
            events.push_back(e);
        }
    }
};

// Copies `size` bytes through `queue` and waits for them (fails the test on any error).
inline void copy_and_wait(hal::Queue& queue, void* dst, const void* src, size_t size) {
    ASSERT_EQ(queue.append_copy(dst, src, size, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(queue.host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
}

// Bytes of device memory `src`, read back through a copy into the device's host memory.
inline std::vector<uint8_t> read_back(const hal::DeviceRef& device, hal::Queue& queue, const void* src, size_t size) {
    Memory host(device, hal::MemoryKind::host, size);
    std::vector<uint8_t> out(size);
    if (!host.ptr) return out;
    copy_and_wait(queue, host.ptr, src, size);
    std::memcpy(out.data(), host.ptr, size);
    return out;
}

}  // namespace zehal::test
