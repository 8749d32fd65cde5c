// The HAL conformance suite: one fixture over a backend provider, the suites of each area
// of the contract (bodies in <area>_contract.cpp) and the one line that runs them all for a
// backend:
//
//     ZEHAL_INSTANTIATE_HAL_CONTRACT(my_backend_provider());
//
// A backend without a device here skips every test with the reason (or fails them when its
// provider says the backend is required).
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend_provider.hpp"
#include "hal/device.hpp"

namespace zehal::test::contract {

// A wait long enough for any command of the suite; only there to turn a hang into a failure.
inline constexpr uint64_t kHangGuardNs = 20'000'000'000ull;

// `size` bytes of `kind` memory of a device, freed when it goes (a lost device may answer
// DEVICE_LOST to the free: its memory is released with it).
class Allocation {
public:
    Allocation(const hal::DeviceRef& device, hal::MemoryKind kind, size_t size, size_t alignment = 0);
    ~Allocation();
    Allocation(const Allocation&) = delete;
    Allocation& operator=(const Allocation&) = delete;
    // The first byte, typed.
    template <typename T = uint8_t>
    T* as() const {
        return static_cast<T*>(ptr_);
    }
    void* ptr() const { return ptr_; }

private:
    hal::DeviceRef device_;
    void* ptr_ = nullptr;
};

// A pool of `count` events with `flags`, and its events.
struct EventSet {
    std::shared_ptr<hal::EventPool> pool;
    std::vector<hal::EventRef> events;
    EventSet(const hal::DeviceRef& device, uint32_t count, uint32_t flags = hal::kPoolHostVisible);
};

// `n` bytes that differ from one seed to the next.
std::vector<uint8_t> random_bytes(size_t n, uint32_t seed);

// Every test of the suite: the provider's device in device_, or the test skipped.
class HalContract : public testing::TestWithParam<BackendProvider> {
protected:
    void SetUp() override;

    // A queue of the copy group when the device has one, else of the compute group.
    std::shared_ptr<hal::Queue> queue();
    // A queue on engine 0 of group `ordinal`.
    std::shared_ptr<hal::Queue> queue(uint32_t ordinal);
    // The provider's other device; null (and the test failed) when there is none.
    hal::DeviceRef other_device();
    // Copies through `q` and waits (fails the test on any error).
    void copy_and_wait(hal::Queue& q, void* dst, const void* src, size_t size);
    // The bytes at `src` (any memory of the device), read back through a host allocation.
    std::vector<uint8_t> read_back(hal::Queue& q, const void* src, size_t size);

    hal::DeviceRef device_;
};

// The areas of the contract, one suite each.
class QueueContract : public HalContract {};
class MemoryContract : public HalContract {};
class EventContract : public HalContract {};
class TimestampContract : public HalContract {};
class TraceSourceContract : public HalContract {};
class LostDeviceContract : public HalContract {};
class DeviceContract : public HalContract {};
// Kernels, with modules built from the SPIR-V of tests/kernels.
class KernelContract : public HalContract {
protected:
    // A module of tests/kernels/<name>.spv; null with skip_reason_ set when the device builds
    // no modules here (UNSUPPORTED_FEATURE: the log says why), null and a failure otherwise.
    hal::ModuleRef module(const char* name);
    // Kernel `name` of `m` (null and a failure when there is none).
    hal::KernelRef kernel(const hal::ModuleRef& m, const char* name);

    std::string skip_reason_;
};

// The SPIR-V of tests/kernels/<name>.cl, built at build time (empty when missing).
std::vector<uint8_t> spirv_of(const char* name);

// Test names end with the backend's name.
inline std::string backend_name(const testing::TestParamInfo<BackendProvider>& info) { return info.param.name; }

}  // namespace zehal::test::contract

// Runs every suite of the contract for the backend `provider` describes.
#define ZEHAL_INSTANTIATE_HAL_CONTRACT(provider)                                                 \
    namespace zehal::test::contract {                                                            \
    INSTANTIATE_TEST_SUITE_P(Hal, QueueContract, testing::Values(provider), backend_name);       \
    INSTANTIATE_TEST_SUITE_P(Hal, MemoryContract, testing::Values(provider), backend_name);      \
    INSTANTIATE_TEST_SUITE_P(Hal, EventContract, testing::Values(provider), backend_name);       \
    INSTANTIATE_TEST_SUITE_P(Hal, TimestampContract, testing::Values(provider), backend_name);   \
    INSTANTIATE_TEST_SUITE_P(Hal, TraceSourceContract, testing::Values(provider), backend_name); \
    INSTANTIATE_TEST_SUITE_P(Hal, LostDeviceContract, testing::Values(provider), backend_name);  \
    INSTANTIATE_TEST_SUITE_P(Hal, DeviceContract, testing::Values(provider), backend_name);      \
    INSTANTIATE_TEST_SUITE_P(Hal, KernelContract, testing::Values(provider), backend_name);      \
    }                                                                                            \
    static_assert(true, "a semicolon follows the macro")
