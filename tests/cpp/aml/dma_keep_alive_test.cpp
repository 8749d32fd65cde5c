// A request's keep-alive: held by the engine until the copy is seen done (fire-and-forget
// copies included), dropped by whoever sees it done (poll, barrier, close, the watcher, the
// request's own wait or cancel), never under the engine's lock; and the barrier that waits
// for the newest request instead of appending a barrier command (counted in the sim
// device's trace of commands).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "aml.h"
#include "aml/area.hpp"
#include "aml/area/ze.h"
#include "aml/dma.hpp"
#include "aml/dma/ze.h"
#include "aml_test_util.hpp"
#include "hal/trace_record.hpp"
#include "hal/trace_source.hpp"

namespace {

using zehal::aml::Area;
using zehal::aml::Dma;
using zehal::aml::Request;
namespace hal = zehal::hal;

// A keep-alive that says where it was dropped, and may call back into the engine there (the
// engine's lock must not be held).
struct Probe {
    explicit Probe(std::shared_ptr<Dma> d = nullptr) : dma(std::move(d)) {}
    ~Probe() {
        if (dma) dma->poll();  // deadlocks if dropped under the engine's lock
        if (dropped_on) *dropped_on = std::this_thread::get_id();
    }
    std::shared_ptr<Dma> dma;
    std::thread::id* dropped_on = nullptr;
};

struct Fixture {
    explicit Fixture(hal::DeviceRef d) : dev(std::move(d)) {
        EXPECT_EQ(Area::create(dev, hal::MemoryKind::host, 0, 0, 64, &host), ZE_RESULT_SUCCESS);
        EXPECT_EQ(Area::create(dev, hal::MemoryKind::device, 0, 0, 64, &device), ZE_RESULT_SUCCESS);
        EXPECT_EQ(Dma::create(dev, 1, 0, &dma), ZE_RESULT_SUCCESS);
        EXPECT_EQ(host->map(kBig, &src), ZE_RESULT_SUCCESS);
        EXPECT_EQ(device->map(kBig, &dst), ZE_RESULT_SUCCESS);
    }
    // A copy long enough (on a throttled device) that the copies behind it stay queued.
    void queue_long_copy() { ASSERT_EQ(dma->copy(dst, src, kBig), ZE_RESULT_SUCCESS); }
    char* small_dst() const { return static_cast<char*>(dst) + kBig - 64; }
    char* small_src() const { return static_cast<char*>(src) + kBig - 64; }

    static constexpr size_t kBig = 4u << 20;
    hal::DeviceRef dev;
    std::shared_ptr<Area> host, device;
    std::shared_ptr<Dma> dma;
    void* src = nullptr;
    void* dst = nullptr;
};

// 4 MiB at 32 MiB/s: ~125 ms of copy ahead of the small ones.
hal::DeviceRef slow_device() { return zehal::aml::test::throttled_device(32u << 20); }

TEST(DmaKeepAlive, AFireAndForgetCopyHoldsItUntilABarrierSeesItDone) {
    Fixture f(slow_device());
    f.queue_long_copy();
    auto probe = std::make_shared<Probe>(f.dma);
    std::weak_ptr<Probe> watch = probe;
    ASSERT_EQ(f.dma->copy(f.small_dst(), f.small_src(), 64, nullptr, {}, std::move(probe)), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(watch.expired());  // queued behind the long copy: the engine holds it
    EXPECT_EQ(f.dma->pending(), 1u);
    EXPECT_EQ(f.dma->barrier(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(watch.expired());
}

TEST(DmaKeepAlive, WaitAndCancelDropIt) {
    Fixture f(slow_device());
    f.queue_long_copy();
    std::thread::id waited_on, cancelled_on;
    auto a = std::make_shared<Probe>(f.dma);
    auto b = std::make_shared<Probe>(f.dma);
    a->dropped_on = &waited_on;
    b->dropped_on = &cancelled_on;
    std::weak_ptr<Probe> wa = a, wb = b;
    std::shared_ptr<Request> ra, rb;
    ASSERT_EQ(f.dma->copy(f.small_dst(), f.small_src(), 64, &ra, {}, std::move(a)), ZE_RESULT_SUCCESS);
    ASSERT_EQ(f.dma->copy(f.small_src() - 64, f.small_dst() - 64, 64, &rb, {}, std::move(b)), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(wb.expired());
    EXPECT_EQ(rb->cancel(), ZE_RESULT_SUCCESS);  // still queued: taken back
    EXPECT_TRUE(rb->cancelled());
    EXPECT_TRUE(wb.expired());
    EXPECT_EQ(cancelled_on, std::this_thread::get_id());
    EXPECT_FALSE(wa.expired());
    EXPECT_EQ(ra->wait(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(wa.expired());
    EXPECT_EQ(waited_on, std::this_thread::get_id());
}

TEST(DmaKeepAlive, TheWatcherDropsItWithoutACall) {
    Fixture f(zehal::aml::test::sim_device());
    std::thread::id dropped_on;
    auto probe = std::make_shared<Probe>(f.dma);
    probe->dropped_on = &dropped_on;
    std::weak_ptr<Probe> watch = probe;
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->copy(f.small_dst(), f.small_src(), 64, &r, {}, std::move(probe)), ZE_RESULT_SUCCESS);
    f.dma->watch(*r);
    // Only the flags word is read, as a C caller does; the watcher marks it done.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!watch.expired() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
    ASSERT_TRUE(watch.expired());
    EXPECT_NE(dropped_on, std::this_thread::get_id());  // the watcher's thread
    EXPECT_EQ(std::atomic_ref<int>(r->handle()->flags).load(std::memory_order_acquire), AML_DMA_ZE_REQUEST_FLAGS_DONE);
}

TEST(DmaKeepAlive, TheNextSubmissionAndCloseDropIt) {
    Fixture f(zehal::aml::test::sim_device());
    auto first = std::make_shared<Probe>(f.dma);
    std::weak_ptr<Probe> wfirst = first;
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->copy(f.small_dst(), f.small_src(), 64, &r, {}, std::move(first)), ZE_RESULT_SUCCESS);
    while (r->event()->query() == ZE_RESULT_NOT_READY) std::this_thread::yield();  // done, not yet seen
    EXPECT_FALSE(wfirst.expired());
    ASSERT_EQ(f.dma->copy(f.small_src() - 64, f.small_dst() - 64, 64, nullptr, {}, std::make_shared<Probe>(f.dma)),
              ZE_RESULT_SUCCESS);
    EXPECT_TRUE(wfirst.expired());  // the submission polled it

    auto last = std::make_shared<Probe>();  // no engine: dropped by close(), after which nothing is accepted
    std::weak_ptr<Probe> wlast = last;
    ASSERT_EQ(f.dma->copy(f.small_dst(), f.small_src(), 64, nullptr, {}, std::move(last)), ZE_RESULT_SUCCESS);
    EXPECT_EQ(f.dma->close(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(wlast.expired());
}

TEST(DmaKeepAlive, ARefusedCopyDropsItAtOnce) {
    Fixture f(zehal::aml::test::sim_device());
    auto probe = std::make_shared<Probe>(f.dma);
    std::weak_ptr<Probe> watch = probe;
    EXPECT_EQ(f.dma->copy(f.dst, f.src, Fixture::kBig + 1, nullptr, {}, std::move(probe)),
              ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_TRUE(watch.expired());
    EXPECT_EQ(f.dma->pending(), 0u);
}

TEST(DmaKeepAlive, ManyThreadsCloseWhileCopiesHoldThem) {
    Fixture f(slow_device());
    f.queue_long_copy();
    std::vector<std::weak_ptr<Probe>> watches;
    for (int i = 0; i < 16; ++i) {
        auto p = std::make_shared<Probe>();
        watches.push_back(p);
        ASSERT_EQ(f.dma->copy(f.small_dst(), f.small_src(), 64, nullptr, {}, std::move(p)), ZE_RESULT_SUCCESS);
    }
    // Each close returns once every copy completed; the keep-alives are dropped by whichever
    // closer unlinked them, outside the engine's lock, so another closer may return while
    // that one still drops them: once all closers returned, none is left.
    std::vector<std::thread> closers;
    for (int t = 0; t < 4; ++t) closers.emplace_back([&] { EXPECT_EQ(f.dma->close(), ZE_RESULT_SUCCESS); });
    for (auto& t : closers) t.join();
    for (const auto& w : watches) EXPECT_TRUE(w.expired());
    EXPECT_TRUE(f.dma->closed());
}

// Counts the barrier commands the sim device ran while `body` ran (its trace of commands).
template <typename Body>
size_t barrier_commands(const hal::DeviceRef& dev, Body body) {
    hal::TraceSource* trace = dev->trace_source();
    const uint32_t engine_group = 0;  // the sim's per-command events
    EXPECT_EQ(trace->start({&engine_group, 1}), ZE_RESULT_SUCCESS);
    body();
    EXPECT_EQ(trace->stop(), ZE_RESULT_SUCCESS);
    std::vector<hal::TraceRecord> records(trace->capacity() / sizeof(hal::TraceRecord));
    uint64_t lost = 0;
    const size_t n = trace->drain(records.data(), records.size() * sizeof(hal::TraceRecord), &lost) /
                     sizeof(hal::TraceRecord);
    EXPECT_EQ(lost, 0u);
    constexpr uint32_t kCommandType = 6;  // metric: the command's kind
    constexpr uint64_t kBarrierKind = 2;  // its value for a barrier
    constexpr uint64_t kCopyKind = 0;
    size_t barriers = 0, copies = 0;
    for (size_t i = 0; i < n; ++i) {
        if (records[i].kind != hal::kRecordSample || records[i].metric != kCommandType) continue;
        barriers += records[i].value == kBarrierKind;
        copies += records[i].value == kCopyKind;
    }
    EXPECT_GT(copies, 0u);  // the trace saw the commands
    return barriers;
}

TEST(DmaKeepAlive, TheCBarrierWaitsForTheNewestRequestWithoutABarrierCommand) {
    hal::DeviceRef dev = zehal::aml::test::sim_device();
    aml_area* host = nullptr;
    aml_dma* dma = nullptr;
    ASSERT_EQ(aml_area_ze_host_create(&host, 0, 64), AML_SUCCESS);
    ASSERT_EQ(aml_dma_ze_create(&dma, zehal::aml::test::handle(dev), 1, 0), AML_SUCCESS);
    auto* a = static_cast<char*>(aml_area_mmap(host, 4096, nullptr));
    auto* b = static_cast<char*>(aml_area_mmap(host, 4096, nullptr));
    std::memset(a, 0x5A, 4096);

    // The newest copy has a request: the barrier waits for it.
    aml_dma_request* req = nullptr;
    EXPECT_EQ(
        barrier_commands(dev,
                         [&] {
                             for (int i = 0; i < 4; ++i)
                                 ASSERT_EQ(aml_dma_ze_copy_signal(dma, i == 3 ? &req : nullptr, b, a, 4096, nullptr),
                                           AML_SUCCESS);
                             ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
                             ASSERT_EQ(std::atomic_ref<int>(reinterpret_cast<aml_dma_ze_request*>(req)->flags).load(),
                                       AML_DMA_ZE_REQUEST_FLAGS_DONE);
                         }),
        0u);
    EXPECT_EQ(aml_dma_wait(dma, &req), AML_SUCCESS);
    EXPECT_EQ(b[4095], 0x5A);

    // The newest copy has none (fire-and-forget): a barrier command.
    EXPECT_EQ(barrier_commands(dev,
                               [&] {
                                   ASSERT_EQ(aml_dma_ze_copy_signal(dma, &req, b, a, 4096, nullptr), AML_SUCCESS);
                                   ASSERT_EQ(aml_dma_ze_copy_signal(dma, nullptr, a, b, 4096, nullptr), AML_SUCCESS);
                                   ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
                               }),
              1u);
    EXPECT_EQ(aml_dma_wait(dma, &req), AML_SUCCESS);

    // Nothing since: nothing to wait for.
    EXPECT_EQ(barrier_commands(dev,
                               [&] {
                                   ASSERT_EQ(aml_dma_ze_copy_signal(dma, &req, b, a, 4096, nullptr), AML_SUCCESS);
                                   ASSERT_EQ(aml_dma_wait(dma, &req), AML_SUCCESS);
                                   ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
                                   ASSERT_EQ(aml_dma_barrier(dma), AML_SUCCESS);
                               }),
              0u);

    EXPECT_EQ(aml_dma_ze_destroy(&dma), AML_SUCCESS);
    aml_area_munmap(host, a, 4096);
    aml_area_munmap(host, b, 4096);
    aml_area_ze_destroy(&host);
}

TEST(DmaKeepAlive, ACancelledNewestRequestFallsBackToABarrierCommand) {
    Fixture f(slow_device());
    size_t barriers = barrier_commands(f.dev, [&] {
        f.queue_long_copy();
        std::shared_ptr<Request> r;
        ASSERT_EQ(f.dma->copy(f.small_dst(), f.small_src(), 64, &r), ZE_RESULT_SUCCESS);
        ASSERT_EQ(r->cancel(), ZE_RESULT_SUCCESS);  // queued behind the long copy: taken back
        ASSERT_TRUE(r->cancelled());
        EXPECT_EQ(f.dma->barrier(), ZE_RESULT_SUCCESS);  // still waits for the long copy
        EXPECT_EQ(f.dma->pending(), 0u);
    });
    EXPECT_EQ(barriers, 1u);
}

}  // namespace
