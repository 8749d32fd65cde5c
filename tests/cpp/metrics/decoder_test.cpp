// The decoder (contract §5.4): decodable metrics, counting, partial decoding, sets,
// timestamps (wraps, ticks before the sync), and safety on truncated, corrupt and random data.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/clock.hpp"
#include "metrics/decoder.hpp"
#include "metrics_test_util.hpp"
#include "support/quiet_sim.hpp"

namespace zehal::metrics::test {
namespace {

using zehal::test::quiet;

using namespace std::chrono_literals;

std::shared_ptr<Decoder> make_decoder(const std::shared_ptr<Tracer>& t) {
    std::shared_ptr<Decoder> d;
    EXPECT_EQ(Decoder::create(t, &d), ZE_RESULT_SUCCESS);
    return d;
}

// Full decode of `raw` for `metrics`: entries and per-set counts.
struct Decoded {
    ze_result_t result = ZE_RESULT_SUCCESS;
    std::vector<MetricEntry> entries;
    std::vector<uint32_t> per_set;
    size_t consumed = 0;
};

Decoded decode_all(Decoder& dec, const std::vector<uint8_t>& raw, std::span<const Metric* const> metrics = {}) {
    Decoded out;
    size_t size = raw.size();
    uint32_t sets = 0, count = 0;
    out.result = dec.decode(&size, raw.data(), metrics, &sets, nullptr, &count, nullptr);
    if (out.result != ZE_RESULT_SUCCESS && out.result != ZE_RESULT_ERROR_INVALID_ARGUMENT) return out;
    out.per_set.assign(sets, 0);
    if (count == 0) return out;
    out.entries.resize(count);
    out.result = dec.decode(&size, raw.data(), metrics, &sets, out.per_set.data(), &count, out.entries.data());
    out.entries.resize(count);
    out.consumed = size;
    return out;
}

Record rec(uint16_t kind, uint32_t metric, uint64_t ticks, uint64_t value, uint32_t sub = hal::kRootDevice) {
    return Record{kind, static_cast<uint16_t>(kRecord), metric, ticks, value, sub, 0};
}

std::vector<uint8_t> bytes_of(const std::vector<Record>& recs) {
    std::vector<uint8_t> raw(recs.size() * kRecord);
    std::memcpy(raw.data(), recs.data(), raw.size());
    return raw;
}

void run_fills(const hal::DeviceRef& d, int n, std::vector<std::pair<uint64_t, uint64_t>>* windows = nullptr) {
    void* p = nullptr;
    ASSERT_EQ(d->allocate(hal::MemoryKind::device, 4096, 64, 0, 0, &p), ZE_RESULT_SUCCESS);
    std::shared_ptr<hal::Queue> q;
    ASSERT_EQ(d->create_queue(hal::kCopyOrdinal, 0, &q), ZE_RESULT_SUCCESS);
    for (int i = 0; i < n; ++i) {
        const uint8_t pattern = static_cast<uint8_t>(i);
        const uint64_t before = host_now_ns();
        ASSERT_EQ(q->append_fill(p, &pattern, 1, 4096, nullptr, {}), ZE_RESULT_SUCCESS);
        ASSERT_EQ(q->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
        if (windows) windows->emplace_back(before, host_now_ns());
    }
    ASSERT_EQ(d->free(p), ZE_RESULT_SUCCESS);
}

TEST(Decoder, CreateAndDecodableMetricsCountModes) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents", "AsyncEvents"});
    std::shared_ptr<Decoder> dec;
    EXPECT_EQ(Decoder::create(nullptr, &dec), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(Decoder::create(t, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(Decoder::create(t, &dec), ZE_RESULT_SUCCESS);

    uint32_t count = 0;
    EXPECT_EQ(dec->decodable_metrics(nullptr, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(dec->decodable_metrics(&count, nullptr), ZE_RESULT_SUCCESS);
    ASSERT_EQ(count, 10u);
    count = 3;
    EXPECT_EQ(dec->decodable_metrics(&count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    std::vector<const Metric*> out(16, nullptr);
    ASSERT_EQ(dec->decodable_metrics(&count, out.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 3u);
    EXPECT_EQ(out[0]->info().name, "CommandStart");
    EXPECT_EQ(out[2]->info().name, "BytesMoved");
    EXPECT_EQ(out[3], nullptr);
    count = 16;
    ASSERT_EQ(dec->decodable_metrics(&count, out.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 10u);
    EXPECT_EQ(out[8]->info().name, "AsyncCounter");
    EXPECT_EQ(out[10], nullptr);  // extra slots untouched
    for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(out[i], t->decodable_metrics()[i].get());
    EXPECT_EQ(dec->sets(), 1u);
}

TEST(Decoder, DecodesCommandsWithTimestampsInsideTheirHostWindows) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    auto dec = make_decoder(t);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    constexpr int kCommands = 300;
    run_fills(d, kCommands, &windows);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    auto raw = read_until_drained(*t);

    Decoded all = decode_all(*dec, raw);
    ASSERT_EQ(all.result, ZE_RESULT_SUCCESS);
    ASSERT_EQ(all.entries.size(), kCommands * 8u);
    ASSERT_EQ(all.per_set.size(), 1u);
    EXPECT_EQ(all.per_set[0], kCommands * 8u);
    EXPECT_EQ(all.consumed, raw.size());
    for (int c = 0; c < kCommands; ++c) {
        for (int m = 0; m < 8; ++m) {
            const MetricEntry& e = all.entries[c * 8 + m];
            EXPECT_EQ(e.metric_index, static_cast<uint32_t>(m));
            EXPECT_EQ(e.on_subdevice, 0);
            EXPECT_EQ(e.subdevice_id, 0u);
            EXPECT_GE(e.timestamp, windows[c].first) << "command " << c << " metric " << m;
            EXPECT_LE(e.timestamp, windows[c].second) << "command " << c << " metric " << m;
        }
        EXPECT_EQ(all.entries[c * 8 + 2].value, 4096u);                             // BytesMoved
        EXPECT_LE(all.entries[c * 8].timestamp, all.entries[c * 8 + 1].timestamp);  // start <= end
    }
}

TEST(Decoder, CountingModesAndPartialDecoding) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    auto dec = make_decoder(t);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    run_fills(d, 5);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    auto raw = read_until_drained(*t);
    const Decoded full = decode_all(*dec, raw);
    ASSERT_EQ(full.entries.size(), 40u);

    // Counting: set count 0 and entry count 0.
    size_t size = raw.size();
    uint32_t sets = 0, count = 0;
    ASSERT_EQ(dec->decode(&size, raw.data(), {}, &sets, nullptr, &count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(sets, 1u);
    EXPECT_EQ(count, 40u);
    EXPECT_EQ(size, raw.size());
    // Entry count 0 with sets given: per-set totals.
    sets = 4;
    count = 0;
    uint32_t per_set[4] = {7, 7, 7, 7};
    ASSERT_EQ(dec->decode(&size, raw.data(), {}, &sets, per_set, &count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(sets, 1u);
    EXPECT_EQ(per_set[0], 40u);
    EXPECT_EQ(per_set[1], 7u);
    EXPECT_EQ(count, 40u);

    // Partial: 13 entries at a time, continuing from the bytes consumed.
    std::vector<MetricEntry> joined;
    size_t offset = 0;
    while (offset < raw.size()) {
        std::vector<MetricEntry> part(13);
        size = raw.size() - offset;
        sets = 1;
        count = 13;
        ASSERT_EQ(dec->decode(&size, raw.data() + offset, {}, &sets, per_set, &count, part.data()), ZE_RESULT_SUCCESS);
        ASSERT_LE(count, 13u);
        EXPECT_EQ(per_set[0], count);
        EXPECT_EQ(size % kRecord, 0u);
        ASSERT_GT(size, 0u);
        joined.insert(joined.end(), part.begin(), part.begin() + count);
        offset += size;
    }
    ASSERT_EQ(joined.size(), full.entries.size());
    for (size_t i = 0; i < joined.size(); ++i) {
        EXPECT_EQ(joined[i].value, full.entries[i].value);
        EXPECT_EQ(joined[i].metric_index, full.entries[i].metric_index);
        EXPECT_EQ(joined[i].timestamp, full.entries[i].timestamp);
    }

    // More room than entries: corrected down.
    std::vector<MetricEntry> big(100);
    size = raw.size();
    sets = 9;
    count = 100;
    ASSERT_EQ(dec->decode(&size, raw.data(), {}, &sets, nullptr, &count, big.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 40u);
    EXPECT_EQ(sets, 1u);
    EXPECT_EQ(size, raw.size());
}

TEST(Decoder, MetricSubsetsIndexIntoTheMetricsPassed) {
    auto d = make_device(quiet());
    auto other = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    auto dec = make_decoder(t);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    run_fills(d, 3);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    auto raw = read_until_drained(*t);
    const auto& m = t->decodable_metrics();
    const Metric* subset[] = {m[7].get(), m[2].get()};  // QueueDepth, BytesMoved
    Decoded part = decode_all(*dec, raw, subset);
    ASSERT_EQ(part.result, ZE_RESULT_SUCCESS);
    ASSERT_EQ(part.entries.size(), 6u);
    for (int c = 0; c < 3; ++c) {
        EXPECT_EQ(part.entries[2 * c].metric_index, 1u);  // BytesMoved comes first in the raw data
        EXPECT_EQ(part.entries[2 * c].value, 4096u);
        EXPECT_EQ(part.entries[2 * c + 1].metric_index, 0u);
    }

    size_t size = raw.size();
    uint32_t sets = 0, count = 0;
    const Metric* twice[] = {m[2].get(), m[2].get()};
    EXPECT_EQ(dec->decode(&size, raw.data(), twice, &sets, nullptr, &count, nullptr), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    const Metric* null_metric[] = {nullptr};
    EXPECT_EQ(dec->decode(&size, raw.data(), null_metric, &sets, nullptr, &count, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    auto foreign_group = group_named(other, "EngineEvents");
    const Metric* foreign[] = {&foreign_group->metrics()[0]};
    EXPECT_EQ(dec->decode(&size, raw.data(), foreign, &sets, nullptr, &count, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    auto not_traced = group_named(d, "AsyncEvents");
    const Metric* undecodable[] = {&not_traced->metrics()[0]};
    EXPECT_EQ(dec->decode(&size, raw.data(), undecodable, &sets, nullptr, &count, nullptr),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(sets, 0u);  // failed calls leave outputs alone
    EXPECT_EQ(count, 0u);
}

TEST(Decoder, BadArguments) {
    auto d = make_device(quiet());
    auto t = make_tracer(d, {"EngineEvents"});
    auto dec = make_decoder(t);
    auto raw = bytes_of({rec(hal::kRecordSample, 0, 1, 2)});
    size_t size = raw.size();
    uint32_t sets = 0, count = 0;
    EXPECT_EQ(dec->decode(nullptr, raw.data(), {}, &sets, nullptr, &count, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dec->decode(&size, nullptr, {}, &sets, nullptr, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dec->decode(&size, raw.data(), {}, nullptr, nullptr, &count, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(dec->decode(&size, raw.data(), {}, &sets, nullptr, nullptr, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    sets = 1;
    count = 1;
    EXPECT_EQ(dec->decode(&size, raw.data(), {}, &sets, nullptr, &count, nullptr),
              ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    // No data: no entries, in the one set of a device without sub-devices.
    size = 0;
    sets = count = 0;
    EXPECT_EQ(dec->decode(&size, nullptr, {}, &sets, nullptr, &count, nullptr), ZE_RESULT_SUCCESS);
    EXPECT_EQ(sets, 1u);
    EXPECT_EQ(count, 0u);
    MetricEntry none[2] = {};
    uint32_t per_set = 7;
    count = 2;
    EXPECT_EQ(dec->decode(&size, raw.data(), {}, &sets, &per_set, &count, none), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 0u);
    EXPECT_EQ(per_set, 0u);
    EXPECT_EQ(size, 0u);
    // Still fine afterwards.
    EXPECT_EQ(decode_all(*dec, raw).entries.size(), 1u);
    // Destroyed: every call refuses.
    EXPECT_EQ(dec->destroy(), ZE_RESULT_SUCCESS);
    EXPECT_TRUE(dec->closed());
    EXPECT_EQ(dec->destroy(), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    size = raw.size();
    sets = count = 0;
    EXPECT_EQ(dec->decode(&size, raw.data(), {}, &sets, nullptr, &count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(dec->decodable_metrics(&count, nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_TRUE(dec->metrics().empty());
    // A destroyed tracer gives no decoder.
    ASSERT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
    std::shared_ptr<Decoder> late;
    EXPECT_EQ(Decoder::create(t, &late), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
}

TEST(Decoder, OutlivesItsTracer) {
    auto d = make_device(quiet());
    std::weak_ptr<Tracer> weak;
    std::shared_ptr<Decoder> dec;
    std::vector<uint8_t> raw;
    {
        auto t = make_tracer(d, {"EngineEvents"});
        weak = t;
        dec = make_decoder(t);
        ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
        run_fills(d, 2);
        ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
        raw = read_until_drained(*t);
        ASSERT_EQ(t->destroy(), ZE_RESULT_SUCCESS);
    }
    EXPECT_TRUE(weak.expired());
    d.reset();
    Decoded all = decode_all(*dec, raw);
    EXPECT_EQ(all.result, ZE_RESULT_SUCCESS);
    EXPECT_EQ(all.entries.size(), 16u);
    uint32_t count = 0;
    ASSERT_EQ(dec->decodable_metrics(&count, nullptr), ZE_RESULT_SUCCESS);
    std::vector<const Metric*> ms(count);
    ASSERT_EQ(dec->decodable_metrics(&count, ms.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(ms[2]->info().name, "BytesMoved");
}

TEST(Decoder, OneSetPerSubdeviceLaidOutSetBySet) {
    auto d = make_device(quiet(2));
    ASSERT_EQ(d->properties().subdevices, 2u);
    auto t = make_tracer(d, {"EngineEvents"});
    auto dec = make_decoder(t);
    EXPECT_EQ(dec->sets(), 2u);
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    run_fills(d, 4);
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    auto raw = read_until_drained(*t);
    Decoded all = decode_all(*dec, raw);
    ASSERT_EQ(all.result, ZE_RESULT_SUCCESS);
    ASSERT_EQ(all.per_set.size(), 2u);
    EXPECT_EQ(all.per_set[0] + all.per_set[1], all.entries.size());
    EXPECT_GT(all.per_set[0], 0u);
    EXPECT_GT(all.per_set[1], 0u);
    for (size_t i = 0; i < all.entries.size(); ++i) {
        const uint32_t set = i < all.per_set[0] ? 0 : 1;
        EXPECT_EQ(all.entries[i].on_subdevice, 1);
        EXPECT_EQ(all.entries[i].subdevice_id, set);
    }
    // A partial decode keeps raw order across sets and lays out what it took set by set.
    std::vector<MetricEntry> part(10);
    uint32_t per_set[2] = {0, 0};
    size_t size = raw.size();
    uint32_t sets = 2, count = 10;
    ASSERT_EQ(dec->decode(&size, raw.data(), {}, &sets, per_set, &count, part.data()), ZE_RESULT_SUCCESS);
    EXPECT_EQ(count, 10u);
    EXPECT_EQ(per_set[0] + per_set[1], 10u);
    for (uint32_t i = 0; i < 10; ++i) EXPECT_EQ(part[i].subdevice_id, i < per_set[0] ? 0u : 1u);
}

// Crafted streams on a device with 32 valid timestamp bits.
class CraftedDecode : public ::testing::Test {
protected:
    void SetUp() override {
        sim::SimConfig c = quiet(2);
        c.timestamp_valid_bits = 32;
        c.timer_hz = 19'200'000;
        device_ = make_device(c);
        tracer_ = make_tracer(device_, {"EngineEvents", "AsyncEvents"});
        decoder_ = make_decoder(tracer_);
    }
    hal::DeviceRef device_;
    std::shared_ptr<Tracer> tracer_;
    std::shared_ptr<Decoder> decoder_;
};

TEST_F(CraftedDecode, TicksJustBeforeTheSyncAndAcrossTheWrap) {
    const uint64_t host = 5'000'000'000ull;
    const uint64_t wrap = 1ull << 32;
    auto raw = bytes_of({
        rec(hal::kRecordClockSync, 0, 1000, host), rec(hal::kRecordSample, 0, 990, 1),  // 10 ticks before the sync
        rec(hal::kRecordSample, 0, 1000, 2),                                            // at the sync
        rec(hal::kRecordSample, 0, 1192, 3),                                            // 192 ticks after: 10 us
        rec(hal::kRecordClockSync, 0, wrap - 10, host + 1'000'000'000ull),
        rec(hal::kRecordSample, 0, 5, 4),          // 15 ticks after the sync, past the wrap
        rec(hal::kRecordSample, 0, wrap - 20, 5),  // 10 before it
    });
    Decoded all = decode_all(*decoder_, raw);
    ASSERT_EQ(all.result, ZE_RESULT_SUCCESS);
    ASSERT_EQ(all.entries.size(), 5u);
    EXPECT_EQ(all.entries[0].timestamp, host - 520);  // 10 ticks of 52.08 ns
    EXPECT_EQ(all.entries[1].timestamp, host);
    EXPECT_EQ(all.entries[2].timestamp, host + 10'000);
    EXPECT_EQ(all.entries[3].timestamp, host + 1'000'000'000ull + 781);
    EXPECT_EQ(all.entries[4].timestamp, host + 1'000'000'000ull - 520);
}

TEST_F(CraftedDecode, TheLastSyncCarriesOverToTheNextDecode) {
    const uint64_t host = 7'000'000'000ull;
    auto first = bytes_of({rec(hal::kRecordClockSync, 0, 100, host), rec(hal::kRecordSample, 0, 100, 1)});
    auto second = bytes_of({rec(hal::kRecordSample, 0, 100 + 19'200, 2)});  // 1 ms later, no sync
    ASSERT_EQ(decode_all(*decoder_, first).entries.at(0).timestamp, host);
    ASSERT_EQ(decode_all(*decoder_, second).entries.at(0).timestamp, host + 1'000'000);
}

TEST_F(CraftedDecode, UnknownKindsAreSkippedBySize) {
    std::vector<uint8_t> raw = bytes_of({rec(hal::kRecordClockSync, 0, 0, 1)});
    const uint16_t unknown[6] = {99, 12, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF};  // 12 bytes of kind 99
    raw.insert(raw.end(), reinterpret_cast<const uint8_t*>(unknown), reinterpret_cast<const uint8_t*>(unknown) + 12);
    auto tail = bytes_of({rec(hal::kRecordSample, 3, 0, 77), rec(hal::kRecordDropped, 0, 0, 5),
                          rec(hal::kRecordExportWrite, 9, 0, 0xAB, 1)});
    raw.insert(raw.end(), tail.begin(), tail.end());
    Decoded all = decode_all(*decoder_, raw);
    ASSERT_EQ(all.result, ZE_RESULT_SUCCESS);
    ASSERT_EQ(all.entries.size(), 2u);
    EXPECT_EQ(all.entries[0].value, 77u);
    EXPECT_EQ(all.entries[0].metric_index, 3u);
    EXPECT_EQ(all.entries[1].value, 0xABu);
    EXPECT_EQ(all.entries[1].on_subdevice, 1);
    EXPECT_EQ(all.entries[1].subdevice_id, 1u);
    EXPECT_EQ(all.per_set, (std::vector<uint32_t>{1, 1}));
    EXPECT_EQ(all.consumed, raw.size());
}

TEST_F(CraftedDecode, CorruptRecordsStopDecodingAfterTheWholeOnesBefore) {
    const std::vector<Record> good = {rec(hal::kRecordSample, 0, 0, 1), rec(hal::kRecordSample, 1, 0, 2)};
    auto corrupt_with = [&](Record bad) {
        auto recs = good;
        recs.push_back(bad);
        recs.push_back(rec(hal::kRecordSample, 2, 0, 3));
        return bytes_of(recs);
    };
    Record zero_size = rec(hal::kRecordSample, 0, 0, 0);
    zero_size.size = 0;
    Record short_known = rec(hal::kRecordSample, 0, 0, 0);
    short_known.size = 16;
    Record too_long = rec(hal::kRecordSample, 0, 0, 0);
    too_long.size = 4000;
    for (const Record& bad : {zero_size, short_known, too_long, rec(hal::kRecordSample, 10, 0, 0),
                              rec(hal::kRecordSample, 0, 0, 0, 2), rec(hal::kRecordExportWrite, 1000, 0, 0)}) {
        auto raw = corrupt_with(bad);
        size_t size = raw.size();
        uint32_t sets = 0, count = 0;
        EXPECT_EQ(decoder_->decode(&size, raw.data(), {}, &sets, nullptr, &count, nullptr),
                  ZE_RESULT_ERROR_INVALID_ARGUMENT);
        EXPECT_EQ(count, 2u);
        Decoded all = decode_all(*decoder_, raw);
        EXPECT_EQ(all.result, ZE_RESULT_ERROR_INVALID_ARGUMENT);
        ASSERT_EQ(all.entries.size(), 2u);
        EXPECT_EQ(all.entries[1].value, 2u);
        EXPECT_EQ(all.consumed, 2 * kRecord);
    }
}

TEST_F(CraftedDecode, EveryTruncationDecodesTheWholeRecordsBeforeIt) {
    std::vector<Record> recs = {rec(hal::kRecordClockSync, 0, 0, 1000)};
    for (uint32_t i = 0; i < 6; ++i) recs.push_back(rec(hal::kRecordSample, i, i, i));
    const auto raw = bytes_of(recs);
    for (size_t cut = 1; cut < raw.size(); ++cut) {
        // An exact-size heap copy, so reading past `cut` would be caught by ASan.
        std::vector<uint8_t> part(raw.begin(), raw.begin() + static_cast<std::ptrdiff_t>(cut));
        Decoded all = decode_all(*decoder_, part);
        const size_t whole = cut / kRecord;
        const uint32_t expected_entries = whole > 0 ? static_cast<uint32_t>(whole - 1) : 0;
        if (cut % kRecord == 0) {
            EXPECT_EQ(all.result, ZE_RESULT_SUCCESS) << cut;
        } else {
            EXPECT_EQ(all.result, ZE_RESULT_ERROR_INVALID_ARGUMENT) << cut;
        }
        ASSERT_EQ(all.entries.size(), expected_entries) << cut;
        if (expected_entries) {
            EXPECT_EQ(all.consumed, whole * kRecord) << cut;
        }
    }
}

TEST_F(CraftedDecode, ThousandsOfRandomAndMutatedStringsNeverCrash) {
    std::mt19937_64 rng(12345);
    std::vector<Record> valid = {rec(hal::kRecordClockSync, 0, 0, 1000)};
    for (uint32_t i = 0; i < 40; ++i)
        valid.push_back(rec(i % 3 ? hal::kRecordSample : hal::kRecordExportWrite, i % 10, i, i,
                            i % 3 == 0 ? hal::kRootDevice : i % 2));
    const auto base = bytes_of(valid);
    for (int iter = 0; iter < 6000; ++iter) {
        std::vector<uint8_t> raw;
        switch (iter % 3) {
            case 0: {  // random bytes
                raw.resize(1 + rng() % 300);
                for (auto& b : raw) b = static_cast<uint8_t>(rng());
                break;
            }
            case 1: {  // random records with small kinds and sizes
                const size_t n = 1 + rng() % 12;
                for (size_t k = 0; k < n; ++k) {
                    Record r = rec(static_cast<uint16_t>(rng() % 8), static_cast<uint32_t>(rng() % 12), rng(), rng(),
                                   static_cast<uint32_t>(rng() % 4));
                    if (rng() % 4 == 0) r.size = static_cast<uint16_t>(rng() % 64);
                    const auto* p = reinterpret_cast<const uint8_t*>(&r);
                    raw.insert(raw.end(), p, p + kRecord);
                }
                raw.resize(raw.size() - rng() % 8);
                if (raw.empty()) raw.push_back(1);
                break;
            }
            default: {  // a valid stream with flipped bytes, cut anywhere
                raw = base;
                for (int f = 0; f < 3; ++f) raw[rng() % raw.size()] ^= static_cast<uint8_t>(1u << (rng() % 8));
                raw.resize(1 + rng() % raw.size());
                break;
            }
        }
        size_t size = raw.size();
        uint32_t sets = 0, count = 0;
        const ze_result_t counted = decoder_->decode(&size, raw.data(), {}, &sets, nullptr, &count, nullptr);
        ASSERT_TRUE(counted == ZE_RESULT_SUCCESS || counted == ZE_RESULT_ERROR_INVALID_ARGUMENT);
        ASSERT_EQ(sets, 2u);
        std::vector<MetricEntry> entries(count + 1);
        std::vector<uint32_t> per_set(2);
        uint32_t room = count + 1;
        const ze_result_t decoded = decoder_->decode(&size, raw.data(), {}, &sets, per_set.data(), &room,
                                                     entries.data());
        ASSERT_EQ(decoded, counted);
        ASSERT_EQ(room, count);
        ASSERT_EQ(per_set[0] + per_set[1], count);
        ASSERT_LE(size, raw.size());
        for (uint32_t i = 0; i < count; ++i) {
            ASSERT_LT(entries[i].metric_index, 10u);
            ASSERT_LT(entries[i].subdevice_id, 2u);
        }
    }
}

// A clock with few valid bits wraps many times while the tracer runs: clock-sync records
// come often enough that every decoded timestamp stays in the host window, in order.
TEST(DecoderWrap, ShortWrapPeriodsDecodeInOrderInsideTheWindow) {
    sim::SimConfig c = quiet();
    c.timestamp_valid_bits = 21;  // wraps every ~109 ms at 19.2 MHz
    c.async_records_per_s = 20'000;
    c.start_ticks = (1ull << 21) - 1000;
    auto d = make_device(c);
    auto t = make_tracer(d, {"AsyncEvents"});
    auto dec = make_decoder(t);
    const uint64_t before = host_now_ns();
    ASSERT_EQ(t->enable(true), ZE_RESULT_SUCCESS);
    std::vector<uint8_t> raw;
    std::vector<uint8_t> buf(1 << 16);
    const auto until = std::chrono::steady_clock::now() + 350ms;
    while (std::chrono::steady_clock::now() < until) {
        size_t size = buf.size();
        t->read(&size, buf.data());
        raw.insert(raw.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size));
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(t->disable(true), ZE_RESULT_SUCCESS);
    auto rest = read_until_drained(*t);
    raw.insert(raw.end(), rest.begin(), rest.end());
    const uint64_t after = host_now_ns();
    Decoded all = decode_all(*dec, raw);
    ASSERT_EQ(all.result, ZE_RESULT_SUCCESS);
    ASSERT_GT(all.entries.size(), 1000u);
    uint64_t last = 0;
    for (const MetricEntry& e : all.entries) {
        EXPECT_GE(e.timestamp, before);
        EXPECT_LE(e.timestamp, after);
        EXPECT_GE(e.timestamp + 100, last);  // in order (within a tick of rounding)
        last = e.timestamp;
    }
}

}  // namespace
}  // namespace zehal::metrics::test
