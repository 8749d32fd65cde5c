// The bounded trace record buffer: drops what does not fit, reports each gap at its place.
#include "hal/trace_buffer.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace zehal::hal {
namespace {

TraceRecord sample(uint64_t value) {
    return TraceRecord{kRecordSample, sizeof(TraceRecord), 0, value, value, kRootDevice, 0};
}

std::vector<TraceRecord> samples(uint64_t first, size_t n) {
    std::vector<TraceRecord> v;
    for (size_t i = 0; i < n; ++i) v.push_back(sample(first + i));
    return v;
}

TEST(TraceBuffer, DrainsInOrderAcrossTheWrap) {
    TraceBuffer b(4);
    TraceRecord out[8];
    uint64_t lost = 0;
    b.push(samples(0, 3).data(), 3, false);
    ASSERT_EQ(b.drain(out, 2, &lost), 2u);
    b.push(samples(3, 3).data(), 3, false);  // wraps around the end of the storage
    ASSERT_EQ(b.drain(out, 8, &lost), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(out[i].value, 2 + i);
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(b.drain(out, 8, &lost), 0u);
}

TEST(TraceBuffer, LossesAreReportedBeforeTheRecordsThatFollowThem) {
    TraceBuffer b(2);
    TraceRecord out[4];
    uint64_t lost = 0;
    b.push(samples(0, 5).data(), 5, false);  // 2 kept, 3 dropped after them
    b.lose(1);                               // one more lost before reaching the buffer
    ASSERT_EQ(b.drain(out, 4, &lost), 2u);
    EXPECT_EQ(lost, 0u);  // the gap comes after these two
    b.push(samples(10, 1).data(), 1, false);
    ASSERT_EQ(b.drain(out, 4, &lost), 1u);
    EXPECT_EQ(lost, 4u);  // reported with the record after the gap
    EXPECT_EQ(out[0].value, 10u);
}

TEST(TraceBuffer, TrailingLossesAreReportedByAnEmptyDrain) {
    TraceBuffer b(1);
    TraceRecord out[2];
    uint64_t lost = 0;
    b.push(samples(0, 3).data(), 3, false);
    ASSERT_EQ(b.drain(out, 2, &lost), 1u);
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(b.drain(out, 2, &lost), 0u);
    EXPECT_EQ(lost, 2u);
}

TEST(TraceBuffer, AGapInFrontOfEveryRecordAcrossManyWraps) {
    TraceBuffer b(3);
    TraceRecord out[8];
    for (uint64_t round = 0; round < 10; ++round) {
        for (uint64_t i = 0; i < 3; ++i) {
            b.lose(i + 1);
            b.push(samples(round * 10 + i, 1).data(), 1, false);
        }
        EXPECT_EQ(b.size(), 3u);
        b.push(samples(99, 4).data(), 4, false);  // full: 4 more lost after the last record
        for (uint64_t i = 0; i < 3; ++i) {
            uint64_t lost = 0;
            ASSERT_EQ(b.drain(out, 8, &lost), 1u);  // each batch stops at the next gap
            EXPECT_EQ(lost, i + 1);
            EXPECT_EQ(out[0].value, round * 10 + i);
        }
        uint64_t lost = 0;
        EXPECT_EQ(b.drain(out, 8, &lost), 0u);
        EXPECT_EQ(lost, 4u);
    }
}

TEST(TraceBuffer, BatchesRunUpToTheNextGapOnly) {
    TraceBuffer b(8);
    TraceRecord out[8];
    uint64_t lost = 0;
    b.push(samples(0, 3).data(), 3, false);
    b.lose(2);
    b.push(samples(3, 4).data(), 4, false);
    EXPECT_EQ(b.size(), 7u);
    ASSERT_EQ(b.drain(out, 8, &lost), 3u);
    EXPECT_EQ(lost, 0u);
    ASSERT_EQ(b.drain(out, 2, &lost), 2u);  // a smaller batch than what follows the gap
    EXPECT_EQ(lost, 2u);
    EXPECT_EQ(out[0].value, 3u);
    ASSERT_EQ(b.drain(out, 8, &lost), 2u);
    EXPECT_EQ(lost, 2u);  // the gap is reported once
    EXPECT_EQ(out[1].value, 6u);
    EXPECT_EQ(b.drain(nullptr, 0, &lost), 0u);
}

TEST(TraceBuffer, WholeGroupsAreNeverSplit) {
    TraceBuffer b(4);
    TraceRecord out[4];
    uint64_t lost = 0;
    b.push(samples(0, 3).data(), 3, true);
    b.push(samples(3, 3).data(), 3, true);  // one slot left: the whole group is dropped
    ASSERT_EQ(b.drain(out, 4, &lost), 3u);
    EXPECT_EQ(b.drain(out, 4, &lost), 0u);
    EXPECT_EQ(lost, 3u);
}

TEST(TraceBuffer, ClearForgetsRecordsAndLosses) {
    TraceBuffer b(2);
    TraceRecord out[2];
    uint64_t lost = 0;
    b.push(samples(0, 4).data(), 4, false);
    b.clear();
    EXPECT_EQ(b.drain(out, 2, &lost), 0u);
    EXPECT_EQ(lost, 0u);
    EXPECT_EQ(b.drain(out, 0, &lost), 0u);
    EXPECT_EQ(TraceBuffer(0).slots(), 1u);
}

}  // namespace
}  // namespace zehal::hal
