// Two CUDA devices (docs/devices.md, docs/cuda.md): peer access, copies between their memory
// on the streams of either device in both directions, concurrent copies on both devices'
// queues, a fill of a peer's memory, waits for the other device's events, and device memory
// of another backend refused. Skips,
// saying why, with fewer than two CUDA devices.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "raw_cuda.hpp"
#include "support/backend_devices.hpp"
#include "support/peer_copies.hpp"
#include "hal/registry.hpp"

namespace zehal::test {
namespace {

using hal::MemoryKind;

// The first two CUDA devices, or a skip.
#define ZEHAL_REQUIRE_TWO_CUDA(a, b)                                                                               \
    do {                                                                                                           \
        std::shared_ptr<hal::Backend> backend_;                                                                    \
        if (hal::find_backend("cuda", &backend_) != ZE_RESULT_SUCCESS) GTEST_SKIP() << "cuda backend unavailable"; \
        if (backend_->devices().size() < 2)                                                                        \
            GTEST_SKIP() << "two CUDA devices needed, " << backend_->devices().size() << " found";                 \
        (a) = backend_->devices()[0];                                                                              \
        (b) = backend_->devices()[1];                                                                              \
    } while (0)

// The bytes of `p` (memory of `d`), read back on `d`'s queue.
std::vector<uint8_t> bytes_of(const hal::DeviceRef& d, const void* p, size_t size) {
    return read_back(d, *copy_queue(d), p, size);
}

TEST(CudaPeer, AccessIsReportedAlike) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    EXPECT_TRUE(a->can_access_peer(*a));
    EXPECT_EQ(a->can_access_peer(*b), b->can_access_peer(*a));
    hal::PeerProperties p;
    ASSERT_EQ(a->peer_properties(*b, &p), ZE_RESULT_SUCCESS);
    EXPECT_EQ(p.access, a->can_access_peer(*b));
    EXPECT_TRUE(a->copies_peer_memory(*b));
}

TEST(CudaPeer, CopiesInBothDirectionsOnEitherDevice) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    for (size_t n : {size_t{4} << 10, size_t{1} << 20, size_t{64} << 20}) {
        std::vector<uint8_t> data(n);
        for (size_t i = 0; i < n; ++i) data[i] = static_cast<unsigned char>(i * 31 + n);
        for (const hal::DeviceRef& runner : {a, b}) {
            SCOPED_TRACE(testing::Message() << n << " bytes on " << runner->properties().name);
            Memory host(runner, MemoryKind::host, n);
            Memory on_a(a, MemoryKind::device, n), on_b(b, MemoryKind::device, n), back(a, MemoryKind::device, n);
            std::memcpy(host.ptr, data.data(), n);
            auto q = copy_queue(runner);
            ASSERT_EQ(copied(q, on_a.ptr, host.ptr, n), ZE_RESULT_SUCCESS);
            ASSERT_EQ(copied(q, on_b.ptr, on_a.ptr, n), ZE_RESULT_SUCCESS);
            ASSERT_EQ(copied(q, back.ptr, on_b.ptr, n), ZE_RESULT_SUCCESS);
            EXPECT_EQ(bytes_of(b, on_b.ptr, n), data);
            EXPECT_EQ(bytes_of(a, back.ptr, n), data);
        }
    }
}

// A copy between device memories runs in its stream's context whatever is current
// (docs/cuda.md): with the other device's context current, as a CUDA runtime user working on
// that device leaves it, copies on a's queue (within a, to b, timed by an event) land, and
// the caller's context is still the current one afterwards.
TEST(CudaPeer, CopiesRunWithAnotherDevicesContextCurrent) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    bench::RawCuda cu;
    ASSERT_TRUE(cu.load());
    bench::CUdevice dev_b = 0;
    ASSERT_TRUE(bench::find_cuda_device(cu, b->properties().uuid, &dev_b));
    bench::CUcontext ctx_b = nullptr;
    ASSERT_EQ(cu.cuDevicePrimaryCtxRetain(&ctx_b, dev_b), bench::kCudaSuccess);
    constexpr size_t n = 64 << 10;
    std::vector<uint8_t> data(n);
    for (size_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(i * 7 + 3);
    Memory host(a, MemoryKind::host, n), src(a, MemoryKind::device, n), mid(a, MemoryKind::device, n),
        dst(b, MemoryKind::device, n);
    std::memcpy(host.ptr, data.data(), n);
    Events timed(a, 1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    auto qa = copy_queue(a);
    ASSERT_EQ(copied(qa, src.ptr, host.ptr, n), ZE_RESULT_SUCCESS);

    ASSERT_EQ(cu.cuCtxPushCurrent(ctx_b), bench::kCudaSuccess);
    const ze_result_t within = qa->append_copy(mid.ptr, src.ptr, n, nullptr, {});
    const ze_result_t to_peer = qa->append_copy(dst.ptr, mid.ptr, n, timed.events[0], {});
    const ze_result_t waited = qa->host_synchronize(kHangGuardNs);
    bench::CUcontext popped = nullptr;
    ASSERT_EQ(cu.cuCtxPopCurrent(&popped), bench::kCudaSuccess);
    cu.cuDevicePrimaryCtxRelease(dev_b);
    EXPECT_EQ(popped, ctx_b);
    ASSERT_EQ(within, ZE_RESULT_SUCCESS);
    ASSERT_EQ(to_peer, ZE_RESULT_SUCCESS);
    ASSERT_EQ(waited, ZE_RESULT_SUCCESS);
    EXPECT_EQ(bytes_of(b, dst.ptr, n), data);
    hal::KernelTimestampResult ts{};
    uint32_t count = 1;
    ASSERT_EQ(timed.events[0]->query_kernel_timestamps(&count, &ts), ZE_RESULT_SUCCESS);
    EXPECT_LT(ts.global_start, ts.global_end);
}

TEST(CudaPeer, ConcurrentCopiesOnBothDevicesQueues) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    EXPECT_EQ(failed_concurrent_peer_rounds(a, b, 32u << 20), 0);
}

TEST(CudaPeer, FillOfAPeersMemoryNeedsAccess) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    Memory on_b(b, MemoryKind::device, 4096);
    auto q = copy_queue(a);
    const uint32_t pattern = 0x5EEDF00D;
    const ze_result_t r = q->append_fill(on_b.ptr, &pattern, 4, 4096, nullptr, {});
    if (!a->can_access_peer(*b)) {
        EXPECT_EQ(r, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        return;
    }
    ASSERT_EQ(r, ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const std::vector<uint8_t> got = bytes_of(b, on_b.ptr, 4096);
    for (size_t i = 0; i < 4096; i += 4) ASSERT_EQ(std::memcmp(&got[i], &pattern, 4), 0) << i;
}

// A command of one device waits for an event of the other, which the host signals; it
// signals only its own device's events.
TEST(CudaPeer, CommandsWaitForAndSignalTheOtherDevicesEvents) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    EXPECT_TRUE(b->waits_for_event(*Events(a, 1).events[0]));
    Events on_a(a, 1), on_b(b, 1);
    Memory src(b, MemoryKind::device, 4096), dst(b, MemoryKind::device, 4096);
    auto q = copy_queue(b);
    const uint32_t pattern = 0xA11CE5u;
    ASSERT_EQ(q->append_fill(src.ptr, &pattern, 4, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
    const hal::EventRef gate[] = {on_a.events[0]};
    ASSERT_EQ(q->append_copy(dst.ptr, src.ptr, 4096, on_b.events[0], gate), ZE_RESULT_SUCCESS);
    EXPECT_EQ(on_b.events[0]->query(), ZE_RESULT_NOT_READY);
    ASSERT_EQ(on_a.events[0]->host_signal(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(on_b.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    const std::vector<uint8_t> got = bytes_of(b, dst.ptr, 4096);
    for (size_t i = 0; i < 4096; i += 4) ASSERT_EQ(std::memcmp(&got[i], &pattern, 4), 0) << i;
    // b's commands signal a's event (a Level Zero pool made for both devices).
    ASSERT_EQ(on_a.events[0]->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(b->signals_event(*on_a.events[0]));
    ASSERT_EQ(q->append_barrier(on_a.events[0], {}), ZE_RESULT_SUCCESS);
    EXPECT_EQ(on_a.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    // The events b may signal it also resets in queue order.
    ASSERT_EQ(q->append_event_reset(on_a.events[0]), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(on_a.events[0]->query(), ZE_RESULT_NOT_READY);
}

// b's command signals a's timestamp event: b's timer writes the ticks, a query reads them in
// a's ticks, inside what a's clock saw around the command (within the clock fits' error).
TEST(CudaPeer, AnotherDevicesCommandTimesTheEventInItsTicks) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    Events timed(a, 1, hal::kPoolHostVisible | hal::kPoolKernelTimestamp);
    EXPECT_TRUE(b->signals_event(*timed.events[0]));
    Memory src(b, MemoryKind::device, 1 << 20), dst(b, MemoryKind::device, 1 << 20);
    auto q = copy_queue(b);
    uint64_t host_ns = 0, before = 0, after = 0;
    ASSERT_EQ(a->global_timestamps(&host_ns, &before), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->append_copy(dst.ptr, src.ptr, 1 << 20, timed.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(timed.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    ASSERT_EQ(a->global_timestamps(&host_ns, &after), ZE_RESULT_SUCCESS);
    hal::KernelTimestampResult ts{};
    uint32_t count = 1;
    ASSERT_EQ(timed.events[0]->query_kernel_timestamps(&count, &ts), ZE_RESULT_SUCCESS);
    ASSERT_EQ(count, 1u);
    EXPECT_LE(ts.global_start, ts.global_end);
    constexpr uint64_t kFitErrorTicks = 200'000;  // 200 us at the 1 GHz timer
    EXPECT_GE(ts.global_start + kFitErrorTicks, before);
    EXPECT_LE(ts.global_end, after + kFitErrorTicks);
    // Reset and signalled by a's own queue: a's ticks as they are.
    ASSERT_EQ(timed.events[0]->host_reset(), ZE_RESULT_SUCCESS);
    Memory own(a, MemoryKind::device, 4096);
    auto qa = copy_queue(a);
    ASSERT_EQ(a->global_timestamps(&host_ns, &before), ZE_RESULT_SUCCESS);
    const uint32_t pattern = 7;
    ASSERT_EQ(qa->append_fill(own.ptr, &pattern, 4, 4096, timed.events[0], {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(timed.events[0]->host_synchronize(kHangGuardNs), ZE_RESULT_SUCCESS);
    ASSERT_EQ(a->global_timestamps(&host_ns, &after), ZE_RESULT_SUCCESS);
    ASSERT_EQ(timed.events[0]->query_kernel_timestamps(&count, &ts), ZE_RESULT_SUCCESS);
    EXPECT_GE(ts.global_start + kFitErrorTicks, before);
    EXPECT_LE(ts.global_end, after + kFitErrorTicks);
}

TEST(CudaPeer, SimDeviceMemoryHasNoPathToACudaEngine) {
    hal::DeviceRef a, b;
    ZEHAL_REQUIRE_TWO_CUDA(a, b);
    expect_no_path_to_sim_memory(a);
}

}  // namespace
}  // namespace zehal::test
