// What the tests of two devices of one backend share (docs/devices.md): a copy queue of
// either device, copies that report their result rather than fail the test (they also run on
// threads of the test), copies between the devices from several threads at once, and memory
// of a device with no path to them.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "hal/sim/sim_backend.hpp"
#include "support/device_objects.hpp"

namespace zehal::test {

// A queue on the first copy engine of `d` (the compute engine without one).
inline std::shared_ptr<hal::Queue> copy_queue(const hal::DeviceRef& d) {
    std::shared_ptr<hal::Queue> q;
    const uint32_t ordinal = d->properties().copy_engines ? hal::kCopyOrdinal : hal::kComputeOrdinal;
    EXPECT_EQ(d->create_queue(ordinal, 0, &q), ZE_RESULT_SUCCESS);
    return q;
}

// Copies on `q` and waits: the first error, or SUCCESS.
inline ze_result_t copied(const std::shared_ptr<hal::Queue>& q, void* dst, const void* src, size_t size) {
    if (ze_result_t r = q->append_copy(dst, src, size, nullptr, {}); r != ZE_RESULT_SUCCESS) return r;
    return q->host_synchronize(kHangGuardNs);
}

// Four threads, each with a queue of its own (two of a, two of b), copying `bytes` of a's
// memory to b's and of b's to a's at once for five rounds, each round's bytes checked at both
// ends: the number of rounds that failed.
inline int failed_concurrent_peer_rounds(const hal::DeviceRef& a, const hal::DeviceRef& b, size_t bytes) {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int lane = 0; lane < 4; ++lane) {
        threads.emplace_back([&, lane] {
            const hal::DeviceRef& runner = lane % 2 ? b : a;
            const hal::DeviceRef& from = lane < 2 ? a : b;
            const hal::DeviceRef& to = lane < 2 ? b : a;
            Memory src(from, hal::MemoryKind::device, bytes), dst(to, hal::MemoryKind::device, bytes);
            Memory host(runner, hal::MemoryKind::host, bytes);
            auto q = copy_queue(runner);
            for (int round = 0; round < 5; ++round) {
                std::memset(host.ptr, lane * 16 + round, bytes);
                bool ok = copied(q, src.ptr, host.ptr, bytes) == ZE_RESULT_SUCCESS &&
                          copied(q, dst.ptr, src.ptr, bytes) == ZE_RESULT_SUCCESS;
                std::memset(host.ptr, 0, bytes);
                ok = ok && copied(q, host.ptr, dst.ptr, bytes) == ZE_RESULT_SUCCESS &&
                     host.as()[0] == lane * 16 + round && host.as()[bytes - 1] == lane * 16 + round;
                if (!ok) failures.fetch_add(1);
            }
        });
    }
    for (std::thread& t : threads) t.join();
    return failures.load();
}

// Device memory of a sim device of this process (another backend than `d`'s): no path
// between it and `d`, refused both ways, nothing queued.
inline void expect_no_path_to_sim_memory(const hal::DeviceRef& d) {
    hal::DeviceRef sim;
    ASSERT_EQ(sim::create_device(sim::SimConfig{}, &sim), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(d->copies_peer_memory(*sim));
    Memory on_sim(sim, hal::MemoryKind::device, 4096), on_d(d, hal::MemoryKind::device, 4096);
    EXPECT_EQ(copy_queue(d)->append_copy(on_d.ptr, on_sim.ptr, 4096, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(copy_queue(sim)->append_copy(on_sim.ptr, on_d.ptr, 4096, nullptr, {}), ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

}  // namespace zehal::test
