// What the level_zero backend tests share: the first level_zero device (or a skip with the
// reason, or a failure where CTest pointed the loader at zehal's driver) and helpers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.hpp"
#include "hal/device.hpp"
#include "hal/registry.hpp"

namespace zehal::test {

// Skips the test (with the registry's reason) unless a level_zero device exists; fails
// instead when ZEHAL_REQUIRE_LEVEL_ZERO is set (CTest sets it beside ZE_ENABLE_ALT_DRIVERS).
#define ZEHAL_REQUIRE_LEVEL_ZERO(device)                                                  \
    do {                                                                                  \
        std::string why_;                                                                 \
        if (!::zehal::test::level_zero_device(&(device), &why_)) {                        \
            if (::zehal::test::level_zero_required()) FAIL() << why_;                     \
            GTEST_SKIP() << why_;                                                         \
        }                                                                                 \
    } while (0)

// The first device of the level_zero backend; false with *why when there is none.
bool level_zero_device(hal::DeviceRef* device, std::string* why);
// True when the environment says the backend must be there.
bool level_zero_required();
// This process's own copy of the device zehal's driver lists first (the first device of the
// first available backend after level_zero, in registry order: cuda, then sim); null when none.
hal::DeviceRef driver_twin();

// Frees what it holds when it goes.
struct Memory {
    hal::DeviceRef device;
    void* ptr = nullptr;
    Memory(const hal::DeviceRef& d, hal::MemoryKind kind, size_t size, size_t alignment = 0);
    ~Memory();
    Memory(const Memory&) = delete;
    Memory& operator=(const Memory&) = delete;
    template <typename T = uint8_t>
    T* as() const { return static_cast<T*>(ptr); }
};

// A pool of `count` events with `flags` and its events.
struct Events {
    std::shared_ptr<hal::EventPool> pool;
    std::vector<hal::EventRef> events;
    Events(const hal::DeviceRef& d, uint32_t count, uint32_t flags = hal::kPoolHostVisible);
};

// Copies `size` bytes through `queue` and waits for them (fails the test on any error).
void copy_and_wait(hal::Queue& queue, void* dst, const void* src, size_t size);
// Bytes of device memory `src`, read back through a copy into host memory.
std::vector<uint8_t> read_back(const hal::DeviceRef& device, hal::Queue& queue, const void* src, size_t size);

// A wait long enough for any command of these tests; only there to turn a hang into a failure.
inline constexpr uint64_t kHangGuardNs = 20'000'000'000ull;

}  // namespace zehal::test
