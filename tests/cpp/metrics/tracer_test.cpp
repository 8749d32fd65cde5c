// The tracer (contract §5.1-5.3) on fresh sim devices: lifecycle, errors, read states,
// markers, drops at both levels, the notification event, threads, and a stress run.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <random>
#include <thread>

#include "hal/sim/sim_trace.hpp"
#include "metrics_test_util.hpp"
#include "wrapped_device.hpp"

namespace zehal::metrics::test {
namespace {

using namespace std::chrono_literals;

sim::SimConfig async_rate(uint64_t rate, size_t hw_bytes = 1u << 20) {
    sim::SimConfig c;
    c.async_records_per_s = rate;
    c.trace_buffer_bytes = hw_bytes;
    return c;
}

// Submits a fill of `bytes` into fresh device memory on the copy engine and waits.
void run_fill(const hal::DeviceRef& d, size_t bytes = 4096) {
    void* p = nullptr;
    ASSERT_EQ(d->allocate(hal::MemoryKind::device, bytes, 64, 0, 0, &p), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    const uint8_t pattern = 0x5A;
    ASSERT_EQ(q->append_fill(p, &pattern, 1, bytes, nullptr, {}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->free(p), ZE_RESULT_SUCCESS);
}

// Checks sequence numbers run on by one over the whole stream.
void expect_contiguous_sequence(const std::vector<Record>& recs) {
    for (size_t i = 1; i < recs.size(); ++i) {
        ASSERT_EQ(recs[i].sequence, static_cast<uint32_t>(recs[i - 1].sequence + 1)) << "at record " << i;
    }
}

// A device that wraps another but has no tracer.
class NoTracerDevice final : public WrappedDevice {
public:
    using WrappedDevice::WrappedDevice;
    hal::TraceSource* trace_source() override { return nullptr; }
};

TEST(Tracer, CreateChecksEveryArgument) {
    auto d = make_device(quiet());
    auto other = make_device(quiet());
    auto engine = group_named(d, "EngineEvents");
    auto async = group_named(d, "AsyncEvents");
    auto util = group_named(d, "EngineUtilization");
    auto foreign = group_named(other, "EngineEvents");
    ASSERT_EQ(activate(d, std::vector<MetricGroupRef>{engine, async}), ZE_RESULT_SUCCESS);
    ASSERT_EQ(activate(other, std::vector<MetricGroupRef>{foreign}), ZE_RESULT_SUCCESS);

    std::shared_ptr<Tracer> t;
    uint32_t notify = 0;
    const MetricGroup* one[] = {engine.get()};
    EXPECT_EQ(Tracer::create(nullptr, one, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(Tracer::create(d, one, &notify, nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(Tracer::create(d, {}, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_SIZE);
    const MetricGroup* null_group[] = {nullptr};
    EXPECT_EQ(Tracer::create(d, null_group, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    const MetricGroup* other_dev[] = {foreign.get()};
    EXPECT_EQ(Tracer::create(d, other_dev, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const MetricGroup* not_tracer[] = {util.get()};
    EXPECT_EQ(Tracer::create(d, not_tracer, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const MetricGroup* twice[] = {engine.get(), engine.get()};
    EXPECT_EQ(Tracer::create(d, twice, &notify, nullptr, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const MetricGroup* not_active[] = {group_named(d, "ExportMemory").get()};
    EXPECT_EQ(Tracer::create(d, not_active, &notify, nullptr, &t), ZE_RESULT_NOT_READY);
    TracerOptions tiny;
    tiny.ring_bytes = kRecord;
    EXPECT_EQ(Tracer::create(d, one, &notify, nullptr, &t, tiny), ZE_RESULT_ERROR_INVALID_ARGUMENT);

    std::shared_ptr<hal::EventPool> device_only, visible;
    ASSERT_EQ(d->create_event_pool(1, 0, &device_only), ZE_RESULT_SUCCESS);
    ASSERT_EQ(d->create_event_pool(1, hal::kPoolHostVisible, &visible), ZE_RESULT_SUCCESS);
    hal::EventRef hidden_event, visible_event;
    ASSERT_EQ(device_only->event(0, &hidden_event), ZE_RESULT_SUCCESS);
    ASSERT_EQ(visible->event(0, &visible_event), ZE_RESULT_SUCCESS);
    EXPECT_EQ(Tracer::create(d, one, &notify, hidden_event, &t), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_FALSE(t);

    // Nothing above left the device busy: a tracer can be made, but only one.
    const MetricGroup* both[] = {engine.get(), async.get()};
    ASSERT_EQ(Tracer::create(d, both, &notify, visible_event, &t), ZE_RESULT_SUCCESS);
    ASSERT_TRUE(t);
    EXPECT_FALSE(t->enabled());
    std::shared_ptr<Tracer> second;
    EXPECT_EQ(Tracer::create(d, one, &notify, nullptr, &second), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    // Another device has its own slot.
    std::shared_ptr<Tracer> elsewhere;
    EXPECT_EQ(Tracer::create(other, other_dev, &notify, nullptr, &elsewhere), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(Tracer::create(d, one, &notify, nullptr, &second), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->decodable_metrics().size(), engine->metrics().size() + async->metrics().size());
}

TEST(Tracer, DeviceWithoutTracerIsUnsupported) {
    auto d = std::make_shared<NoTracerDevice>(make_device(quiet()));
    std::vector<MetricGroupRef> groups;
    ASSERT_EQ(metric_groups(d, &groups), ZE_RESULT_SUCCESS);
    ASSERT_EQ(activate(d, std::span(groups.data(), 1)), ZE_RESULT_SUCCESS);
    const MetricGroup* one[] = {groups[0].get()};
    std::shared_ptr<Tracer> t;
    EXPECT_EQ(Tracer::create(d, one, nullptr, nullptr, &t), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

TEST(Tracer, NotifyEveryNBytesIsRoundedClampedAndWrittenBack) {
    auto d = make_device(quiet());
    auto g = group_named(d, "EngineEvents");
    ASSERT_EQ(activate(d, std::span(&g, 1)), ZE_RESULT_SUCCESS);
    const MetricGroup* one[] = {g.get()};
    TracerOptions small;
    small.ring_bytes = 1u << 16;
    auto check = [&](uint32_t asked, uint32_t expected) {
        std::shared_ptr<Tracer> t;
        uint32_t n = asked;
        ASSERT_EQ(Tracer::create(d, one, &n, nullptr, &t, small), ZE_RESULT_SUCCESS);
        EXPECT_EQ(n, expected) << "asked " << asked;
        EXPECT_EQ(t->notify_every_n_bytes(), expected);
        EXPECT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
    };
    check(0, Tracer::kDefaultNotifyBytes);
    check(1, 32);
    check(32, 32);
    check(33, 64);
    check(1000, 1024);
    check(1u << 16, 1u << 16);
    check((1u << 16) + 1, 1u << 16);
    check(0xFFFFFFFFu, 1u << 16);
    std::shared_ptr<Tracer> t;
    ASSERT_EQ(Tracer::create(d, one, nullptr, nullptr, &t, small), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->notify_every_n_bytes(), Tracer::kDefaultNotifyBytes);
    EXPECT_EQ(t->ring_capacity(), 1u << 16);
}

TEST(Tracer, ReadStatesFollowTheSeeds) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    std::vector<uint8_t> buf(1 << 16);

    // Never enabled.
    size_t size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_NOT_READY);
    EXPECT_EQ(size, 0u);
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_NOT_READY);
    EXPECT_EQ(size, 0u);

    // Enabled: the enable marker (after a clock sync) is there at once.
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(t->enabled());
    size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, 2 * kRecord);
    EXPECT_EQ(t->available(), 2 * kRecord);
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(size, 2 * kRecord);
    auto recs = records_of({buf.begin(), buf.begin() + 64});
    EXPECT_EQ(recs[0].kind, hal::kRecordClockSync);
    EXPECT_EQ(recs[1].kind, hal::kRecordEnable);

    // Enabled, nothing yet.
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, 0u);

    // Disabled with data left: SUCCESS and data, until drained; then NOT_READY.
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(t->enabled());
    size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_GT(size, 0u);
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    ASSERT_GT(size, 0u);
    recs = records_of({buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size)});
    EXPECT_EQ(recs.back().kind, hal::kRecordDisable);
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_NOT_READY);
    EXPECT_EQ(size, 0u);
    size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_NOT_READY);
    EXPECT_EQ(size, 0u);

    // Enabled again: SUCCESS again.
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
}

TEST(Tracer, ReadCopiesWholeRecordsOnly) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    run_fill(d);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    size_t total = 0;
    ASSERT_EQ(t->read(&total, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(total % kRecord, 0u);
    ASSERT_GE(total, 12 * kRecord);  // sync, enable, 8 samples, sync, disable

    std::vector<uint8_t> buf(total + 100, 0xEE);
    size_t size = 10;  // less than a record: nothing
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, 0u);
    EXPECT_EQ(buf[0], 0xEE);
    size = kRecord + 20;  // one record and a bit: one record
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, kRecord);
    EXPECT_EQ(buf[kRecord], 0xEE);
    size = 1;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(t->read(nullptr, buf.data()), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    size = buf.size();  // more than there is: what was written
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(size, total - kRecord);
    EXPECT_EQ(buf[size], 0xEE);
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_NOT_READY);
}

TEST(Tracer, EngineRecordsCarryDecodableIndicesAndContiguousSequences) {
    auto d = make_device(quiet());
    // Engine events second, so decodable indices differ from device-wide ids.
    auto t = make_tracer(d, {"AsyncEvents", "EngineEvents"});
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    run_fill(d, 8192);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    auto recs = records_of(read_until_drained(*t));
    expect_contiguous_sequence(recs);
    EXPECT_EQ(recs.front().sequence, 0u);
    ASSERT_EQ(recs.front().kind, hal::kRecordClockSync);
    std::vector<Record> samples;
    for (auto& r : recs) {
        EXPECT_EQ(r.size, kRecord);
        if (r.kind == hal::kRecordSample) samples.push_back(r);
    }
    ASSERT_EQ(samples.size(), 8u);
    const auto& metrics = t->decodable_metrics();
    for (uint32_t i = 0; i < 8; ++i) {
        ASSERT_LT(samples[i].metric, metrics.size());
        EXPECT_EQ(metrics[samples[i].metric]->group().info().name, "EngineEvents");
        EXPECT_EQ(samples[i].metric, 2 + i);  // after the two async metrics
    }
    EXPECT_EQ(metrics[samples[2].metric]->info().name, "BytesMoved");
    EXPECT_EQ(samples[2].value, 8192u);
    EXPECT_EQ(metrics[samples[3].metric]->info().name, "EngineOrdinal");
    EXPECT_EQ(samples[3].value, hal::kCopyOrdinal);
}

TEST(Tracer, EnableTwiceAndDisableTwiceChangeNothing) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    EXPECT_EQ(t->disable(true), ZE_RESULT_SUCCESS);  // never enabled: nothing to do
    size_t size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_NOT_READY);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->disable(false), ZE_RESULT_SUCCESS);
    auto recs = records_of(read_until_drained(*t));
    int enables = 0, disables = 0;
    for (auto& r : recs) {
        enables += r.kind == hal::kRecordEnable;
        disables += r.kind == hal::kRecordDisable;
    }
    EXPECT_EQ(enables, 1);
    EXPECT_EQ(disables, 1);
}

TEST(Tracer, AsynchronousEnableAndDisableShowThroughReads) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    ASSERT_EQ(t->enable(false), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(t->enabled());
    EXPECT_TRUE(eventually([&] {
        size_t size = 0;
        return t->read(&size, nullptr) == ZE_RESULT_SUCCESS && size > 0;
    }));
    std::vector<uint8_t> buf(4096);
    size_t size = buf.size();
    ASSERT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    ASSERT_EQ(t->disable(false), ZE_RESULT_SUCCESS);
    EXPECT_FALSE(t->enabled());
    // Data (the disable marker) comes, then the tracer reads as drained.
    auto rest = records_of(read_until_drained(*t));
    ASSERT_FALSE(rest.empty());
    EXPECT_EQ(rest.back().kind, hal::kRecordDisable);
}

// A read answers for what happened before it: a command's records once the command has
// completed, and the state an asynchronous request asked for (level-zero-tests reads once
// right after each and expects the data there).
TEST(Tracer, ReadSeesCompletedCommandsAndEarlierRequests) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    std::vector<uint8_t> buf(1 << 16);
    for (int round = 0; round < 20; ++round) {
        ASSERT_EQ(t->enable(false), ZE_RESULT_SUCCESS);
        size_t size = buf.size();
        ASSERT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS) << "round " << round;
        auto recs = records_of({buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size)});
        ASSERT_FALSE(recs.empty()) << "round " << round;
        EXPECT_EQ(recs.back().kind, hal::kRecordEnable);

        run_fill(d);
        size = buf.size();
        ASSERT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS) << "round " << round;
        recs = records_of({buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size)});
        EXPECT_TRUE(std::any_of(recs.begin(), recs.end(), [](const Record& r) { return r.kind == hal::kRecordSample; }))
            << "round " << round << ": the fill's records are not in the first read after it";

        ASSERT_EQ(t->disable(false), ZE_RESULT_SUCCESS);
        size = buf.size();
        ASSERT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS) << "round " << round;
        recs = records_of({buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size)});
        ASSERT_FALSE(recs.empty()) << "round " << round << ": no disable marker in the first read after disable";
        EXPECT_EQ(recs.back().kind, hal::kRecordDisable);
        size = buf.size();
        EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_NOT_READY);
    }
}

TEST(Tracer, DestroyRules) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->destroy(), ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE);
    // Still usable.
    run_fill(d);
    size_t size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_GT(size, 0u);
    ASSERT_EQ(t->disable(false), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(t->closed());
    // Use after destroy.
    EXPECT_EQ(t->destroy(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(t->enable(true), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(t->disable(true), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    std::vector<uint8_t> buf(64);
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_FALSE(t->enabled());
    EXPECT_EQ(t->available(), 0u);
    // The device's slot is free again.
    auto again = make_tracer(d, {"EngineEvents"});
    EXPECT_TRUE(again);
}

TEST(Tracer, DroppingAnEnabledTracerStopsTheSource) {
    auto d = make_device(async_rate(200'000));
    {
        auto t = make_tracer(d, {"AsyncEvents"});
        ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    }
    const uint64_t after = d->trace_source()->produced();
    std::this_thread::sleep_for(5ms);
    EXPECT_EQ(d->trace_source()->produced(), after);
    auto again = make_tracer(d, {"AsyncEvents"});
    EXPECT_TRUE(again);
}

TEST(Tracer, EnableOnALostDeviceFails) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    ASSERT_EQ(d->lose(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->enable(true), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_FALSE(t->enabled());
    size_t size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_NOT_READY);
    EXPECT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
}

// Counts what a stream says about records from the hardware.
struct Tally {
    uint64_t samples = 0;   // kinds 1 and 6
    uint64_t reported = 0;  // sum of kind-4 values
    uint64_t gaps = 0;      // kind-4 records
    uint64_t syncs = 0;
    uint64_t enables = 0;
    uint64_t disables = 0;
};

Tally tally(const std::vector<Record>& recs) {
    Tally t;
    for (auto& r : recs) {
        switch (r.kind) {
            case hal::kRecordSample:
            case hal::kRecordExportWrite:
                ++t.samples;
                break;
            case hal::kRecordDropped:
                t.reported += r.value, ++t.gaps;
                break;
            case hal::kRecordClockSync:
                ++t.syncs;
                break;
            case hal::kRecordEnable:
                ++t.enables;
                break;
            case hal::kRecordDisable:
                ++t.disables;
                break;
            default:
                ADD_FAILURE() << "unknown kind " << r.kind;
        }
    }
    return t;
}

TEST(Tracer, HostRingFullDropsAreReportedInPlaceAndOnTheNextRead) {
    auto d = make_device(async_rate(1'000'000));
    TracerOptions small;
    small.ring_bytes = 4096;  // 128 records
    auto t = make_tracer(d, {"AsyncEvents"}, 0, small);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    ASSERT_TRUE(eventually([&] { return t->dropped() > 0; }));
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    const uint64_t produced = d->trace_source()->produced();

    std::vector<uint8_t> buf(1 << 16);
    size_t size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_WARNING_DROPPED_DATA);
    EXPECT_GT(size, 0u);  // data returned all the same
    std::vector<uint8_t> all(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size));
    auto rest = read_until_drained(*t);
    all.insert(all.end(), rest.begin(), rest.end());
    auto recs = records_of(all);
    expect_contiguous_sequence(recs);
    Tally s = tally(recs);
    EXPECT_GE(s.gaps, 1u);
    EXPECT_EQ(s.reported, t->dropped());
    EXPECT_EQ(s.samples + s.reported, produced);
    EXPECT_EQ(recs.back().kind, hal::kRecordDisable);
    // Nothing lost since: no warning any more.
    size = buf.size();
    EXPECT_EQ(t->read(&size, buf.data()), ZE_RESULT_NOT_READY);
}

TEST(Tracer, HardwareBufferDropsAreReportedToo) {
    // A two-record hardware buffer: each burst of the asynchronous source overflows it.
    auto d = make_device(async_rate(2'000'000, 2 * kRecord));
    auto t = make_tracer(d, {"AsyncEvents"});
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> all;
    std::vector<uint8_t> buf(1 << 16);
    bool warned = false;
    ASSERT_TRUE(eventually([&] {
        size_t size = buf.size();
        const ze_result_t r = t->read(&size, buf.data());
        warned |= r == ZE_RESULT_WARNING_DROPPED_DATA;
        all.insert(all.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size));
        return warned;
    }));
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    const uint64_t produced = d->trace_source()->produced();
    auto rest = read_until_drained(*t);
    all.insert(all.end(), rest.begin(), rest.end());
    auto recs = records_of(all);
    expect_contiguous_sequence(recs);
    Tally s = tally(recs);
    EXPECT_GT(s.reported, 0u);
    EXPECT_EQ(s.reported, t->dropped());
    EXPECT_EQ(s.samples + s.reported, produced);
}

TEST(Tracer, NotificationEventFiresOnceEnoughIsAvailable) {
    auto d = make_device(async_rate(100'000));
    std::shared_ptr<hal::EventPool> pool;
    ASSERT_EQ(d->create_event_pool(1, hal::kPoolHostVisible, &pool), ZE_RESULT_SUCCESS);
    hal::EventRef ev;
    ASSERT_EQ(pool->event(0, &ev), ZE_RESULT_SUCCESS);
    auto t = make_tracer(d, {"AsyncEvents"}, 100 * kRecord, {}, ev);
    EXPECT_EQ(t->notify_every_n_bytes(), 100 * kRecord);
    EXPECT_EQ(ev->query(), ZE_RESULT_NOT_READY);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev->host_synchronize(10'000'000'000ull), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> buf(1 << 20);
    size_t size = buf.size();
    ASSERT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_GE(size, 100 * kRecord);
    // Re-armed by a reset: fires again once enough gathered again.
    ASSERT_EQ(ev->host_reset(), ZE_RESULT_SUCCESS);
    ASSERT_EQ(ev->host_synchronize(10'000'000'000ull), ZE_RESULT_SUCCESS);
    size = buf.size();
    ASSERT_EQ(t->read(&size, buf.data()), ZE_RESULT_SUCCESS);
    EXPECT_GE(size, 100 * kRecord);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
}

// Millions of records from the asynchronous source while one reader drains: every record
// produced is received or reported dropped, exactly, with consistent sequence numbers.
TEST(TracerStress, AsyncSourceMillionsOfRecordsAccountedExactly) {
    auto d = make_device(async_rate(3'000'000));
    auto t = make_tracer(d, {"AsyncEvents"});
    const uint32_t counter = 0;  // AsyncCounter is the group's first metric
    ASSERT_EQ(t->decodable_metrics()[counter]->info().name, "AsyncCounter");
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);

    Tally s;
    uint64_t records = 0;
    uint32_t next_sequence = 0;
    bool sequence_ok = true, counter_ok = true, have_counter = false;
    uint64_t last_counter = 0;
    std::vector<uint8_t> buf(1 << 20);
    auto consume = [&](size_t size) {
        const auto* r = reinterpret_cast<const Record*>(buf.data());
        for (size_t i = 0; i < size / kRecord; ++i) {
            sequence_ok &= r[i].sequence == next_sequence++;
            if (r[i].kind == hal::kRecordSample && r[i].metric == counter) {
                counter_ok &= !have_counter || r[i].value > last_counter;
                last_counter = r[i].value;
                have_counter = true;
            }
            switch (r[i].kind) {
                case hal::kRecordSample:
                    ++s.samples;
                    break;
                case hal::kRecordDropped:
                    s.reported += r[i].value;
                    break;
                default:
                    break;
            }
        }
        records += size / kRecord;
    };
    const auto until = std::chrono::steady_clock::now() + 1500ms;
    while (std::chrono::steady_clock::now() < until) {
        size_t size = buf.size();
        const ze_result_t r = t->read(&size, buf.data());
        ASSERT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_WARNING_DROPPED_DATA) << r;
        consume(size);
        if (size == 0) std::this_thread::sleep_for(100us);
    }
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    const uint64_t produced = d->trace_source()->produced();
    for (;;) {
        size_t size = buf.size();
        const ze_result_t r = t->read(&size, buf.data());
        consume(size);
        if (r == ZE_RESULT_NOT_READY) break;
    }
    EXPECT_GT(produced, 1'000'000u);
    EXPECT_TRUE(sequence_ok);
    EXPECT_TRUE(counter_ok);
    EXPECT_EQ(s.reported, t->dropped());
    EXPECT_EQ(s.samples + s.reported, produced);
    std::cout << "[ stress   ] produced " << produced << ", received " << s.samples << ", dropped " << s.reported
              << ", records read " << records << "\n";
}

// Several readers at once: every record is read by exactly one of them, whole.
TEST(TracerStress, ConcurrentReadersShareTheStream) {
    auto d = make_device(async_rate(500'000));
    auto t = make_tracer(d, {"AsyncEvents"});
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    std::atomic<bool> stop{false};
    std::vector<std::vector<Record>> got(4);
    std::vector<std::thread> readers;
    for (int i = 0; i < 4; ++i) {
        readers.emplace_back([&, i] {
            std::vector<uint8_t> buf(1000 + 517 * i);  // odd sizes: whole records only
            for (;;) {
                size_t size = buf.size();
                const ze_result_t r = t->read(&size, buf.data());
                EXPECT_EQ(size % kRecord, 0u);
                auto recs = records_of({buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size)});
                got[i].insert(got[i].end(), recs.begin(), recs.end());
                if (r == ZE_RESULT_NOT_READY && stop.load()) break;
                if (size == 0) std::this_thread::sleep_for(50us);
            }
        });
    }
    std::this_thread::sleep_for(300ms);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    stop = true;
    for (auto& r : readers) r.join();
    const uint64_t produced = d->trace_source()->produced();
    std::vector<Record> all;
    for (auto& g : got) {
        for (size_t i = 1; i < g.size(); ++i) EXPECT_LT(g[i - 1].sequence, g[i].sequence);  // each reader in order
        all.insert(all.end(), g.begin(), g.end());
    }
    std::sort(all.begin(), all.end(), [](const Record& a, const Record& b) { return a.sequence < b.sequence; });
    expect_contiguous_sequence(all);
    Tally s = tally(all);
    EXPECT_EQ(s.samples + s.reported, produced);
}

// Threads enabling and disabling, synchronously and not, while a reader drains: the
// stream stays well formed (markers alternate, each enable after a clock sync).
TEST(TracerStress, ConcurrentEnablersKeepTheStreamWellFormed) {
    auto d = make_device(async_rate(200'000));
    auto t = make_tracer(d, {"AsyncEvents", "EngineEvents"});
    std::atomic<bool> stop{false};
    std::vector<Record> got;
    std::thread reader([&] {
        std::vector<uint8_t> buf(1 << 16);
        while (!stop.load()) {
            size_t size = buf.size();
            t->read(&size, buf.data());
            auto recs = records_of({buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size)});
            got.insert(got.end(), recs.begin(), recs.end());
            if (size == 0) std::this_thread::sleep_for(50us);
        }
    });
    std::vector<std::thread> togglers;
    for (int i = 0; i < 4; ++i) {
        togglers.emplace_back([&, i] {
            std::mt19937 rng(i);
            for (int k = 0; k < 100; ++k) {
                const bool sync = rng() % 2;
                const ze_result_t r = rng() % 2 ? t->enable(sync) : t->disable(sync);
                EXPECT_EQ(r, ZE_RESULT_SUCCESS);
                if (k % 10 == 0) run_fill(d, 256);
            }
        });
    }
    for (auto& th : togglers) th.join();
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    stop = true;
    reader.join();
    auto rest = read_until_drained(*t);
    auto tail = records_of(rest);
    got.insert(got.end(), tail.begin(), tail.end());
    expect_contiguous_sequence(got);
    bool on = false, synced = false, ok = true;
    for (auto& r : got) {
        if (r.kind == hal::kRecordClockSync) synced = true;
        if (r.kind == hal::kRecordEnable) {
            ok &= !on && synced;
            on = true;
        }
        if (r.kind == hal::kRecordDisable) {
            ok &= on;
            on = false;
        }
        if (r.kind == hal::kRecordSample) ok &= on;
    }
    EXPECT_TRUE(ok);
    EXPECT_FALSE(on);
    EXPECT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
}

// A lost device refuses new activations, tracers and enables; a tracer it had can still
// be disabled and destroyed, and what it gathered stays readable.
TEST(Tracer, LostDeviceRefusesActivationCreateAndEnable) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    ASSERT_TRUE(t);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    auto g = group_named(d, "EngineEvents");
    ASSERT_EQ(d->lose(), ZE_RESULT_SUCCESS);
    const MetricGroupRef groups[] = {g};
    EXPECT_EQ(activate(d, groups), ZE_RESULT_ERROR_DEVICE_LOST);
    const MetricGroup* raw[] = {g.get()};
    std::shared_ptr<Tracer> second;
    uint32_t notify = 0;
    EXPECT_EQ(Tracer::create(d, raw, &notify, nullptr, &second), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_FALSE(second);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    EXPECT_EQ(t->enable(true), ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_FALSE(t->enabled());
    size_t size = 0;
    EXPECT_EQ(t->read(&size, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_GT(size, 0u);
    EXPECT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
}

}  // namespace
}  // namespace zehal::metrics::test
