// Host memory of another backend under a queued CUDA copy (docs/lifetimes.md): CUDA touches
// it in host functions that run in stream order, which cuMemFree knows nothing of; the
// other backend's free waits until they have run. In a child process: a crash fails the
// test, not the run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "support/backend_devices.hpp"
#include "hal/sim/sim_backend.hpp"

namespace zehal::test {
namespace {

TEST(CudaFreeInFlight, FreeingAnotherBackendsHostMemoryWaitsForTheCopy) {
    hal::DeviceRef cuda;
    ZEHAL_REQUIRE_CUDA(cuda);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(
        {
            alarm(60);
            constexpr size_t kBytes = 8u << 20;  // two pieces through the staging buffer
            hal::DeviceRef sim;
            EXPECT_EQ(sim::create_device({}, &sim), ZE_RESULT_SUCCESS);
            void* src = nullptr;
            EXPECT_EQ(sim->allocate(hal::MemoryKind::host, kBytes, 0, 0, 0, &src), ZE_RESULT_SUCCESS);
            std::memset(src, 0x3C, kBytes);
            Memory dst(cuda, hal::MemoryKind::device, kBytes);
            Events events(cuda, 1);
            std::shared_ptr<hal::Queue> q;
            EXPECT_EQ(cuda->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
            const hal::EventRef gate = events.events[0];
            const hal::EventRef waits[] = {gate};
            EXPECT_EQ(q->append_copy(dst.ptr, src, kBytes, nullptr, waits), ZE_RESULT_SUCCESS);
            std::thread freer([&] { EXPECT_EQ(sim->free(src), ZE_RESULT_SUCCESS); });
            EXPECT_EQ(gate->host_signal(), ZE_RESULT_SUCCESS);
            freer.join();
            EXPECT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
            const std::vector<uint8_t> back = read_back(cuda, *q, dst.ptr, kBytes);
            EXPECT_EQ(back, std::vector<uint8_t>(kBytes, 0x3C));
            std::_Exit(::testing::Test::HasFailure() ? 1 : 0);
        },
        ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace zehal::test
