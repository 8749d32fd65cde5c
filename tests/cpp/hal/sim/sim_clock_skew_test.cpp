// The test-only clock skew (ZEHAL_TEST_CLOCK_SKEW): the entry of this process's launcher
// rank, and the sim device's synchronized host times read on the skewed clock.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/clock.hpp"
#include "common/clock_skew.hpp"
#include "hal/sim/sim_config.hpp"
#include "support/sim_fixture.hpp"

namespace zehal {
namespace {

// Sets ZEHAL_TEST_CLOCK_SKEW and the Open MPI rank for one test; unsets both after.
class SkewEnv {
public:
    SkewEnv(const char* skew, const char* rank) {
        setenv("ZEHAL_TEST_CLOCK_SKEW", skew, 1);
        if (rank) setenv("OMPI_COMM_WORLD_RANK", rank, 1);
    }
    ~SkewEnv() {
        unsetenv("ZEHAL_TEST_CLOCK_SKEW");
        unsetenv("OMPI_COMM_WORLD_RANK");
    }
};

TEST(ClockSkew, EntryOfTheLauncherRank) {
    const char* list = "7:1,-2000000000:-100,,3:x,5:0.5";
    struct Case {
        const char* rank;
        int64_t offset_ns;
        int64_t drift_ppb;
    };
    for (const Case& c : {Case{nullptr, 7, 1000}, Case{"1", -2'000'000'000, -100'000}, Case{"2", 0, 0}, Case{"3", 0, 0},
                          Case{"4", 5, 500}, Case{"9", 0, 0}}) {
        SkewEnv env(list, c.rank);
        const ClockSkew s = test_clock_skew();
        EXPECT_EQ(s.offset_ns, c.offset_ns) << (c.rank ? c.rank : "no rank");
        EXPECT_EQ(s.drift_ppb, c.drift_ppb) << (c.rank ? c.rank : "no rank");
    }
}

TEST(ClockSkew, RoundsTheDriftTowardsMinusInfinity) {
    const ClockSkew s{10, -1};  // −1 ppb
    EXPECT_EQ(s.apply(1'000'000'000), 1'000'000'000 + 10 - 1);
    EXPECT_EQ(s.apply(1), 1 + 10 - 1);  // −10⁻⁹ rounds down to −1
    EXPECT_EQ(ClockSkew{}.apply(123), 123);
}

TEST(ClockSkew, MovesTheSimDeviceSynchronizedHostTime) {
    SkewEnv env("3000000000:100", nullptr);
    const hal::DeviceRef d = test::sim_device();
    const ClockSkew skew{3'000'000'000, 100'000};
    const uint64_t before = host_now_ns();
    uint64_t host = 0, ticks = 0;
    ASSERT_EQ(d->global_timestamps(&host, &ticks), ZE_RESULT_SUCCESS);
    const uint64_t after = host_now_ns();
    EXPECT_LE(skew.apply(before), static_cast<int64_t>(host));
    EXPECT_LE(static_cast<int64_t>(host), skew.apply(after));
}

}  // namespace
}  // namespace zehal
