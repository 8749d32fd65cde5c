// The C++ DMA classes: Request (live flags, idempotent wait, timeouts, cancel), copies that
// signal a caller's event, layouts, close, and that every event goes back to the engine.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <set>
#include <vector>

#include "aml/area.hpp"
#include "aml/dma.hpp"
#include "aml/layout.hpp"
#include "aml_test_util.hpp"
#include "hal/sim/sim_backend.hpp"

namespace {

using zehal::aml::Area;
using zehal::aml::Dma;
using zehal::aml::Layout;
using zehal::aml::Request;
using zehal::aml::test::pattern;
namespace hal = zehal::hal;

struct Fixture {
    explicit Fixture(hal::DeviceRef d) : dev(std::move(d)) {
        EXPECT_EQ(Area::create(dev, hal::MemoryKind::host, 0, 0, 64, &host), ZE_RESULT_SUCCESS);
        EXPECT_EQ(Area::create(dev, hal::MemoryKind::device, 0, 0, 64, &device), ZE_RESULT_SUCCESS);
        EXPECT_EQ(Dma::create(dev, 1, 0, &dma), ZE_RESULT_SUCCESS);
    }
    unsigned char* map(Area& area, size_t size) {
        void* p = nullptr;
        EXPECT_EQ(area.map(size, &p), ZE_RESULT_SUCCESS);
        return static_cast<unsigned char*>(p);
    }
    hal::DeviceRef dev;
    std::shared_ptr<Area> host, device;
    std::shared_ptr<Dma> dma;
};

TEST(DmaCpp, CreateChecksEngines) {
    hal::DeviceRef dev = zehal::aml::test::sim_device();
    std::shared_ptr<Dma> dma;
    EXPECT_EQ(Dma::create(nullptr, 1, 0, &dma), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(Dma::create(dev, 1, 0, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(Dma::create(dev, 7, 0, &dma), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(Dma::create(dev, 1, 99, &dma), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ASSERT_EQ(Dma::create(dev, 1, 1, &dma), ZE_RESULT_SUCCESS);
    EXPECT_EQ(dma->ordinal(), 1u);
    EXPECT_EQ(dma->index(), 1u);
    EXPECT_EQ(dma->device(), dev);
}

TEST(DmaCpp, RequestWaitIsIdempotentAndFlagsAreLive) {
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 4096);
    unsigned char* dst = f.map(*f.device, 4096);
    std::memset(src, 0x21, 4096);
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->copy(dst, src, 4096, &r), ZE_RESULT_SUCCESS);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->submitted());
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(r->done());
    EXPECT_EQ(r->flags(), AML_DMA_ZE_REQUEST_FLAGS_DONE);
    EXPECT_EQ(r->handle()->flags, AML_DMA_ZE_REQUEST_FLAGS_DONE);
    EXPECT_EQ(Request::from_handle(r->handle()), r.get());
    EXPECT_EQ(r->result(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r->cancel(), ZE_RESULT_SUCCESS);  // done: nothing to do
    EXPECT_FALSE(r->cancelled());
    EXPECT_TRUE(f.dma->owns(*r));

    // flags() alone (no wait, no barrier) sees the completion.
    std::shared_ptr<Request> polled;
    ASSERT_EQ(f.dma->copy(src, dst, 4096, &polled), ZE_RESULT_SUCCESS);
    while (polled->flags() != AML_DMA_ZE_REQUEST_FLAGS_DONE) {
    }
    EXPECT_EQ(polled->result(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(polled->wait(0), ZE_RESULT_SUCCESS);
    EXPECT_EQ(f.dma->pending(), 0u);
}

TEST(DmaCpp, WaitTimesOutOnAQueuedCopyAndCancelTakesItBack) {
    Fixture f(zehal::aml::test::throttled_device(32u << 20));
    constexpr size_t kBig = 2u << 20;
    unsigned char* src = f.map(*f.host, kBig);
    unsigned char* dst = f.map(*f.device, kBig);
    std::shared_ptr<Request> first, second;
    ASSERT_EQ(f.dma->copy(dst, src, kBig - 64, &first), ZE_RESULT_SUCCESS);
    ASSERT_EQ(f.dma->copy(dst + kBig - 64, src + kBig - 64, 64, &second), ZE_RESULT_SUCCESS);
    EXPECT_EQ(second->wait(0), ZE_RESULT_NOT_READY);
    EXPECT_EQ(second->result(), ZE_RESULT_NOT_READY);
    EXPECT_FALSE(second->done());
    EXPECT_EQ(f.dma->pending(), 2u);
    EXPECT_EQ(second->cancel(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(second->cancelled());
    EXPECT_TRUE(second->done());
    EXPECT_EQ(second->wait(), ZE_RESULT_SUCCESS);  // returns at once
    EXPECT_EQ(first->cancel(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(first->done());
    EXPECT_EQ(f.dma->barrier(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(f.dma->pending(), 0u);
}

TEST(DmaCpp, ACopySignalsTheCallersEvent) {
    Fixture f(zehal::aml::test::sim_device());
    std::shared_ptr<hal::EventPool> pool;
    ASSERT_EQ(f.dev->create_event_pool(2, hal::kPoolHostVisible, &pool), ZE_RESULT_SUCCESS);
    hal::EventRef e0, e1;
    ASSERT_EQ(pool->event(0, &e0), ZE_RESULT_SUCCESS);
    ASSERT_EQ(pool->event(1, &e1), ZE_RESULT_SUCCESS);
    unsigned char* src = f.map(*f.host, 1024);
    unsigned char* dst = f.map(*f.device, 1024);
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->copy(dst, src, 1024, &r, e0), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r->signal(), e0);
    EXPECT_NE(r->event(), e0);  // completion is read from the engine's own event
    EXPECT_EQ(e0->host_synchronize(zehal::kWaitForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    r.reset();  // the caller's event is not recycled by the engine
    EXPECT_EQ(e0->query(), ZE_RESULT_SUCCESS);
    // Fire-and-forget with a signal.
    ASSERT_EQ(f.dma->copy(src, dst, 1024, nullptr, e1), ZE_RESULT_SUCCESS);
    EXPECT_EQ(e1->host_synchronize(zehal::kWaitForever), ZE_RESULT_SUCCESS);
}

// Contract §11: a request is done when its copy finished on the engine, never because its
// signal event was signalled (or reset) by someone else.
TEST(DmaCpp, ARequestIsDoneWhenItsCopyIsNotWhenItsSignalIs) {
    hal::DeviceRef dev;
    zehal::sim::SimConfig config;
    config.bandwidth_bytes_per_s = 64ull << 20;  // 4 MiB take ~60 ms
    ASSERT_EQ(zehal::sim::create_device(config, &dev), ZE_RESULT_SUCCESS);
    Fixture f(dev);
    std::shared_ptr<hal::EventPool> pool;
    ASSERT_EQ(f.dev->create_event_pool(1, hal::kPoolHostVisible, &pool), ZE_RESULT_SUCCESS);
    hal::EventRef signal;
    ASSERT_EQ(pool->event(0, &signal), ZE_RESULT_SUCCESS);
    constexpr size_t kBytes = 4u << 20;
    unsigned char* src = f.map(*f.host, kBytes);
    unsigned char* dst = f.map(*f.host, kBytes);
    std::memset(src, 0x5A, kBytes);
    std::shared_ptr<Request> first, r;
    ASSERT_EQ(f.dma->copy(dst, src, kBytes, &first), ZE_RESULT_SUCCESS);  // keeps the engine busy
    ASSERT_EQ(f.dma->copy(dst, src, kBytes, &r, signal), ZE_RESULT_SUCCESS);
    ASSERT_EQ(signal->host_signal(), ZE_RESULT_SUCCESS);  // someone else signals it early
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);              // returns only once the copy ran
    EXPECT_TRUE(first->done());
    EXPECT_EQ(dst[kBytes - 1], 0x5A);
    // Reset by someone else after the copy: a later request still completes.
    ASSERT_EQ(signal->host_reset(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(f.dma->copy(dst, src, 64, &r, signal), ZE_RESULT_SUCCESS);
    ASSERT_EQ(signal->host_synchronize(zehal::kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(signal->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
}

TEST(DmaCpp, LayoutCopiesFollowCopy1D) {
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 4096);
    unsigned char* dst = f.map(*f.device, 4096);
    unsigned char* back = f.map(*f.host, 4096);
    const std::vector<unsigned char> data = pattern(4096, 5);
    std::memcpy(src, data.data(), 4096);
    std::unique_ptr<Layout> ls, ld, lb, l2d;
    const size_t n[1] = {1024};
    const size_t n2[2] = {32, 32};
    ASSERT_EQ(Layout::dense(src, Layout::kRowMajor, 4, n, {}, {}, &ls), 0);
    ASSERT_EQ(Layout::dense(dst, Layout::kRowMajor, 4, n, {}, {}, &ld), 0);
    ASSERT_EQ(Layout::dense(back, Layout::kColumnMajor, 4, n, {}, {}, &lb), 0);
    ASSERT_EQ(Layout::dense(src, Layout::kRowMajor, 4, n2, {}, {}, &l2d), 0);
    EXPECT_EQ(f.dma->copy(*ld, *l2d), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->copy(*ld, *ls, &r), ZE_RESULT_SUCCESS);
    ASSERT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(f.dma->copy(*lb, *ld, &r), ZE_RESULT_SUCCESS);
    ASSERT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(back, data.data(), 4096), 0);
    std::unique_ptr<Layout> half;
    const size_t h[1] = {512};
    ASSERT_EQ(Layout::dense(dst, Layout::kRowMajor, 4, h, {}, {}, &half), 0);
    EXPECT_EQ(f.dma->copy(*half, *ls), ZE_RESULT_ERROR_INVALID_SIZE);
}

TEST(DmaCpp, CloseWaitsAndRefusesLaterCopies) {
    Fixture f(zehal::aml::test::throttled_device(64u << 20));
    constexpr size_t kSize = 1u << 20;
    unsigned char* src = f.map(*f.host, kSize);
    unsigned char* dst = f.map(*f.device, kSize);
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->copy(dst, src, kSize, &r), ZE_RESULT_SUCCESS);
    EXPECT_EQ(f.dma->close(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(f.dma->closed());
    EXPECT_TRUE(r->done());  // close waited for it
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(f.dma->copy(dst, src, 64, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(f.dma->copy(dst, src, 64, &r), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(f.dma->barrier(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(f.dma->close(), ZE_RESULT_SUCCESS);
}

TEST(DmaCpp, RequestsOutliveTheirEngine) {
    hal::DeviceRef dev = zehal::aml::test::sim_device();
    Fixture f(dev);
    unsigned char* src = f.map(*f.host, 256);
    unsigned char* dst = f.map(*f.device, 256);
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->copy(dst, src, 256, &r), ZE_RESULT_SUCCESS);
    f.dma.reset();  // waits for the copy
    EXPECT_TRUE(r->done());
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(r->cancel(), ZE_RESULT_SUCCESS);
}

TEST(DmaCpp, NewRequestAndAppendCopyCarryOneCopy) {
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 256);
    unsigned char* dst = f.map(*f.device, 256);
    std::shared_ptr<Request> r;
    ASSERT_EQ(f.dma->new_request(&r), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(r->submitted());
    EXPECT_EQ(r->flags(), AML_DMA_ZE_REQUEST_FLAGS_PENDING);
    EXPECT_EQ(r->wait(), ZE_RESULT_ERROR_INVALID_ARGUMENT);  // nothing to wait for yet
    ASSERT_EQ(f.dma->append_copy(dst, src, 256, r.get()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(f.dma->append_copy(dst, src, 256, r.get()), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    std::shared_ptr<Dma> other;
    ASSERT_EQ(Dma::create(f.dev, 1, 1, &other), ZE_RESULT_SUCCESS);
    std::shared_ptr<Request> mine;
    ASSERT_EQ(f.dma->new_request(&mine), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(other->owns(*mine));
    EXPECT_EQ(other->append_copy(dst, src, 256, mine.get()), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(mine->cancel(), ZE_RESULT_SUCCESS);  // never submitted: done, cancelled
    EXPECT_TRUE(mine->cancelled());
}

TEST(DmaCpp, EachCopyGetsAFreshRequestOfItsOwn) {
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 64);
    unsigned char* dst = f.map(*f.device, 64);
    std::shared_ptr<Request> a, b, signalled, after;
    ASSERT_EQ(f.dma->copy(dst, src, 64, &a), ZE_RESULT_SUCCESS);
    ASSERT_EQ(f.dma->copy(dst, src, 64, &b), ZE_RESULT_SUCCESS);
    EXPECT_NE(a, b);
    EXPECT_NE(a->event(), b->event());
    EXPECT_TRUE(a->submitted() && b->submitted());
    std::shared_ptr<hal::EventPool> pool;
    ASSERT_EQ(f.dev->create_event_pool(1, hal::kPoolHostVisible, &pool), ZE_RESULT_SUCCESS);
    hal::EventRef mine;
    ASSERT_EQ(pool->event(0, &mine), ZE_RESULT_SUCCESS);
    ASSERT_EQ(f.dma->copy(dst, src, 64, &signalled, mine), ZE_RESULT_SUCCESS);
    EXPECT_EQ(signalled->signal(), mine);
    ASSERT_EQ(f.dma->copy(dst, src, 64, &after), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(after->signal());
    for (const auto& r : {a, b, signalled, after}) EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(mine->query(), ZE_RESULT_SUCCESS);
    // A failed copy leaves no request behind and the next one works.
    std::shared_ptr<Request> refused;
    EXPECT_EQ(f.dma->copy(dst, src, 0, &refused), ZE_RESULT_ERROR_INVALID_SIZE);
    EXPECT_FALSE(refused);
    ASSERT_EQ(f.dma->copy(dst, src, 64, &refused), ZE_RESULT_SUCCESS);
    EXPECT_EQ(refused->wait(), ZE_RESULT_SUCCESS);
}

TEST(DmaCpp, ADroppedEngineLeavesNoReferenceBehind) {
    // The engine makes a request ahead for the next copy; that request refers back to the
    // engine, which refers to the device: all of it goes with the engine.
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 64);
    unsigned char* dst = f.map(*f.device, 64);
    std::shared_ptr<Dma> dma;
    const long before = f.dev.use_count();
    ASSERT_EQ(Dma::create(f.dev, 1, 0, &dma), ZE_RESULT_SUCCESS);
    for (int i = 0; i < 3; ++i) {
        std::shared_ptr<Request> r;
        ASSERT_EQ(dma->copy(dst, src, 64, &r), ZE_RESULT_SUCCESS);
        EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    }
    EXPECT_GT(f.dev.use_count(), before);
    dma.reset();
    EXPECT_EQ(f.dev.use_count(), before);
}

TEST(DmaCpp, ARequestSeenDoneIsDroppedByTheEnginesNextSubmission) {
    // wait() and flags() only record the completion: the engine tears the request down after
    // its next submission (or poll, pending(), close()), off the path from one
    // copy's completion to the next copy's submission.
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 64);
    unsigned char* dst = f.map(*f.device, 64);
    std::weak_ptr<Request> waited, polled;
    {
        std::shared_ptr<Request> r;
        ASSERT_EQ(f.dma->copy(dst, src, 64, &r), ZE_RESULT_SUCCESS);
        EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
        EXPECT_EQ(r->flags(), AML_DMA_ZE_REQUEST_FLAGS_DONE);
        waited = r;
    }
    EXPECT_FALSE(waited.expired());   // still listed by the engine
    EXPECT_EQ(f.dma->pending(), 0u);  // but not pending
    EXPECT_TRUE(waited.expired());    // pending() dropped it
    {
        std::shared_ptr<Request> r;
        ASSERT_EQ(f.dma->copy(dst, src, 64, &r), ZE_RESULT_SUCCESS);
        while (r->flags() != AML_DMA_ZE_REQUEST_FLAGS_DONE) {
        }
        polled = r;
    }
    EXPECT_FALSE(polled.expired());
    std::shared_ptr<Request> next;
    ASSERT_EQ(f.dma->copy(dst, src, 64, &next), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(polled.expired());  // dropped after the next copy's submission
    EXPECT_EQ(next->wait(), ZE_RESULT_SUCCESS);
    // A request seen done is not watched (nothing left to keep current), and the last one
    // goes with the engine's close().
    std::weak_ptr<Request> last = next;
    f.dma->watch(*next);
    next.reset();
    EXPECT_FALSE(last.expired());
    EXPECT_EQ(f.dma->close(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(last.expired());
}

TEST(DmaCpp, RoundTripsReuseAFewEvents) {
    // Requests seen done are torn down late (after the next submission), yet their events
    // go back to the cache: a loop of copy, wait, drop cycles through a handful of events
    // (the request made ahead, the current one, the one being torn down), not one per copy.
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 64);
    unsigned char* dst = f.map(*f.device, 64);
    std::set<const hal::Event*> seen;
    for (int i = 0; i < 200; ++i) {
        std::shared_ptr<Request> r;
        ASSERT_EQ(f.dma->copy(dst, src, 64, &r), ZE_RESULT_SUCCESS);
        seen.insert(r->event().get());
        ASSERT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    }
    EXPECT_LE(seen.size(), 4u);
    EXPECT_EQ(f.dma->pending(), 0u);
}

TEST(DmaCpp, ManyRequestsReuseEvents) {
    Fixture f(zehal::aml::test::sim_device());
    unsigned char* src = f.map(*f.host, 64);
    unsigned char* dst = f.map(*f.device, 64);
    // Far more requests than the first event pool holds, some held, most dropped at once.
    std::vector<std::shared_ptr<Request>> held;
    for (int i = 0; i < 2000; ++i) {
        std::shared_ptr<Request> r;
        ASSERT_EQ(f.dma->copy(dst, src, 64, &r), ZE_RESULT_SUCCESS);
        if (i % 100 == 0) held.push_back(r);
    }
    ASSERT_EQ(f.dma->barrier(), ZE_RESULT_SUCCESS);
    for (auto& r : held) {
        EXPECT_TRUE(r->done());
        EXPECT_EQ(r->wait(), ZE_RESULT_SUCCESS);
    }
    EXPECT_EQ(f.dma->pending(), 0u);
}

}  // namespace
