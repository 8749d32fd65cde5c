// The copy and timestamp benchmarks run (quick mode) and report sane rows.
#include <gtest/gtest.h>

#include "benchmarks.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

TEST(Bench, CopyBandwidthQuick) {
    auto d = test::sim_device();
    bench::Options o;
    o.quick = true;
    const std::vector<bench::Row> rows = bench::copy_bandwidth(d, o);
    ASSERT_FALSE(rows.empty());
    int directions = 0;
    for (const bench::Row& r : rows) {
        EXPECT_EQ(r.suite, "copy");
        EXPECT_EQ(r.unit, "GB/s");
        // The sim's memory is all host memory: the baseline copies between zehal's own buffers.
        EXPECT_EQ(r.baseline_name, "memcpy, same buffers");
        EXPECT_GT(r.value, 0);
        EXPECT_GT(r.baseline, 0);
        EXPECT_DOUBLE_EQ(r.ratio, r.value / r.baseline);
        // A ratio above 1 always says why; one at or below 1 carries no note.
        EXPECT_EQ(r.note.empty(), r.ratio <= 1.0) << r.name;
        if (r.name.rfind("host->device 4 KiB", 0) == 0 || r.name.rfind("device->host 4 KiB", 0) == 0 ||
            r.name.rfind("device->device 4 KiB", 0) == 0 || r.name.rfind("host->host 4 KiB", 0) == 0)
            ++directions;
    }
    EXPECT_EQ(directions, 4);
}

TEST(Bench, CopyBandwidthWithoutCopyEnginesOrMemory) {
    sim::SimConfig c;
    c.copy_engines = 0;
    c.memory_bytes = 8u << 10;  // too small for two device buffers above 4 KiB
    bench::Options o;
    o.quick = true;
    const std::vector<bench::Row> rows = bench::copy_bandwidth(test::sim_device(c), o);
    EXPECT_FALSE(rows.empty());  // host->host still runs, on the compute engine
    EXPECT_TRUE(bench::copy_bandwidth(nullptr, o).empty());
}

TEST(Bench, TimestampQueryQuick) {
    auto d = test::sim_device();
    bench::Options o;
    o.quick = true;
    const std::vector<bench::Row> rows = bench::timestamp_query(d, o);
    ASSERT_EQ(rows.size(), 3u);
    EXPECT_EQ(rows[0].name, "global_timestamps");
    EXPECT_EQ(rows[1].name, "kernel timestamp query");
    EXPECT_EQ(rows[2].name, "synchronized timestamp query");
    for (const bench::Row& r : rows) {
        EXPECT_EQ(r.suite, "timestamps");
        EXPECT_EQ(r.unit, "us");
        EXPECT_GT(r.value, 0);
        EXPECT_GT(r.baseline, 0);
    }
    EXPECT_TRUE(bench::timestamp_query(nullptr, o).empty());
}

}  // namespace
}  // namespace zehal
