// SimConfig: ZEHAL_SIM_* variables and validation; create_device and the sim probe.
#include "hal/sim/sim_config.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "hal/sim/sim_backend.hpp"

namespace zehal::sim {
namespace {

const char* const kVars[] = {"COMPUTE_ENGINES",
                             "COPY_ENGINES",
                             "MEMORY_BYTES",
                             "TIMER_HZ",
                             "KERNEL_TIMESTAMP_VALID_BITS",
                             "TIMESTAMP_VALID_BITS",
                             "START_TICKS",
                             "SUBDEVICES",
                             "TRACE_BUFFER_BYTES",
                             "BANDWIDTH_BYTES_PER_S",
                             "LINK_BANDWIDTH_BYTES_PER_S",
                             "DEVICES",
                             "FAIL_ALLOCATION_AFTER",
                             "ASYNC_RECORDS_PER_S",
                             "ASYNC_BURST_RECORDS"};

// Sets ZEHAL_SIM_* variables for one test and clears every one of them afterwards.
class Env : public ::testing::Test {
protected:
    void TearDown() override {
        for (const char* v : kVars) unsetenv((std::string("ZEHAL_SIM_") + v).c_str());
    }
    static void set(const char* name, const char* value) {
        setenv((std::string("ZEHAL_SIM_") + name).c_str(), value, 1);
    }
};

TEST_F(Env, DefaultsWithoutVariables) {
    const SimConfig c = SimConfig::from_env();
    const SimConfig d;
    EXPECT_EQ(c.copy_engines, d.copy_engines);
    EXPECT_EQ(c.memory_bytes, d.memory_bytes);
    EXPECT_EQ(c.timer_hz, 19'200'000u);
    EXPECT_EQ(c.kernel_timestamp_valid_bits, 32u);
    EXPECT_FALSE(c.fail_allocation_after.has_value());
    EXPECT_EQ(c.validate(), ZE_RESULT_SUCCESS);
}

TEST_F(Env, EveryVariableIsRead) {
    set("COMPUTE_ENGINES", "2");
    set("COPY_ENGINES", "4");
    set("MEMORY_BYTES", "0x100000");
    set("TIMER_HZ", "1000000000");
    set("KERNEL_TIMESTAMP_VALID_BITS", "40");
    set("TIMESTAMP_VALID_BITS", "48");
    set("START_TICKS", "4294967000");
    set("SUBDEVICES", "3");
    set("TRACE_BUFFER_BYTES", "4096");
    set("BANDWIDTH_BYTES_PER_S", "1000");
    set("LINK_BANDWIDTH_BYTES_PER_S", "2000");
    set("DEVICES", "3");
    set("FAIL_ALLOCATION_AFTER", "7");
    set("ASYNC_RECORDS_PER_S", "10");
    set("ASYNC_BURST_RECORDS", "100");
    const SimConfig c = SimConfig::from_env();
    EXPECT_EQ(c.compute_engines, 2u);
    EXPECT_EQ(c.copy_engines, 4u);
    EXPECT_EQ(c.memory_bytes, 0x100000u);
    EXPECT_EQ(c.timer_hz, 1'000'000'000u);
    EXPECT_EQ(c.kernel_timestamp_valid_bits, 40u);
    EXPECT_EQ(c.timestamp_valid_bits, 48u);
    EXPECT_EQ(c.start_ticks, 4294967000u);
    EXPECT_EQ(c.subdevices, 3u);
    EXPECT_EQ(c.trace_buffer_bytes, 4096u);
    EXPECT_EQ(c.bandwidth_bytes_per_s, 1000u);
    EXPECT_EQ(c.link_bandwidth_bytes_per_s, 2000u);
    EXPECT_EQ(c.devices, 3u);
    ASSERT_TRUE(c.fail_allocation_after.has_value());
    EXPECT_EQ(*c.fail_allocation_after, 7u);
    EXPECT_EQ(c.async_records_per_s, 10u);
    EXPECT_EQ(c.async_burst_records, 100u);
    EXPECT_EQ(c.validate(), ZE_RESULT_SUCCESS);
}

TEST_F(Env, AnEmptyVariableCountsAsUnset) {
    set("COPY_ENGINES", "");
    const SimConfig c = SimConfig::from_env();
    EXPECT_EQ(c.copy_engines, SimConfig{}.copy_engines);
    EXPECT_TRUE(c.malformed.empty());
    EXPECT_EQ(c.validate(), ZE_RESULT_SUCCESS);
}

TEST_F(Env, AMalformedValueIsNamedWithItsVariable) {
    const SimConfig d;
    for (const char* bad : {"abc", "-1", "+2", " 3", "12x", "0x", "99999999999999999999999", "4294967296"}) {
        set("COPY_ENGINES", bad);
        const SimConfig c = SimConfig::from_env();
        EXPECT_EQ(c.copy_engines, d.copy_engines) << bad;
        EXPECT_EQ(c.malformed.rfind(std::string("copy_engines = \"") + bad + "\"", 0), 0u) << c.malformed;
        EXPECT_EQ(c.problem(), c.malformed);
        EXPECT_EQ(c.validate(), ZE_RESULT_ERROR_INVALID_ARGUMENT) << bad;
        hal::DeviceRef device;
        EXPECT_EQ(create_device(c, &device), ZE_RESULT_ERROR_INVALID_ARGUMENT) << bad;
    }
    // A 64-bit field takes what a 32-bit one refuses; the first malformed variable is named.
    set("COPY_ENGINES", "2");
    set("START_TICKS", "4294967296");
    set("FAIL_ALLOCATION_AFTER", "x");
    set("ASYNC_BURST_RECORDS", "y");
    const SimConfig c = SimConfig::from_env();
    EXPECT_EQ(c.start_ticks, 4294967296u);
    EXPECT_FALSE(c.fail_allocation_after.has_value());
    EXPECT_EQ(c.malformed.rfind("fail_allocation_after = \"x\"", 0), 0u) << c.malformed;
}

TEST(SimConfigValidate, RangeChecks) {
    EXPECT_EQ(SimConfig{}.validate(), ZE_RESULT_SUCCESS);
    std::vector<SimConfig> bad(15);
    bad[0].compute_engines = 0;
    bad[1].memory_bytes = 0;
    bad[2].timer_hz = 0;
    bad[3].kernel_timestamp_valid_bits = 0;
    bad[4].kernel_timestamp_valid_bits = 65;
    bad[5].timestamp_valid_bits = 0;
    bad[6].timestamp_valid_bits = 65;
    bad[7].trace_buffer_bytes = 31;
    bad[8].copy_engines = SimConfig::kMaxEngines + 1;
    bad[9].subdevices = SimConfig::kMaxSubdevices + 1;
    bad[10].timer_hz = SimConfig::kMaxTimerHz + 1;
    bad[11].trace_buffer_bytes = SimConfig::kMaxTraceBufferBytes + 1;
    bad[12].async_burst_records = SimConfig::kMaxAsyncBurstRecords + 1;
    bad[13].devices = 0;
    bad[14].devices = SimConfig::kMaxDevices + 1;
    for (size_t i = 0; i < bad.size(); ++i) {
        EXPECT_EQ(bad[i].validate(), ZE_RESULT_ERROR_INVALID_ARGUMENT) << i;
        hal::DeviceRef d;
        EXPECT_EQ(create_device(bad[i], &d), ZE_RESULT_ERROR_INVALID_ARGUMENT) << i;
        EXPECT_EQ(d, nullptr);
    }
    SimConfig edge;
    edge.copy_engines = 0;
    edge.kernel_timestamp_valid_bits = 1;
    edge.timestamp_valid_bits = 64;
    edge.trace_buffer_bytes = 32;
    edge.timer_hz = 1;
    edge.async_burst_records = SimConfig::kMaxAsyncBurstRecords;
    EXPECT_EQ(edge.validate(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(create_device(SimConfig{}, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
}

TEST_F(Env, ProbeMakesOneDeviceFromTheEnvironment) {
    set("COPY_ENGINES", "5");
    set("MEMORY_BYTES", "65536");
    const hal::BackendStatus s = probe();
    EXPECT_EQ(s.name, "sim");
    ASSERT_TRUE(s.available);
    EXPECT_TRUE(s.reason.empty());
    ASSERT_EQ(s.backend->devices().size(), 1u);
    EXPECT_EQ(s.backend->name(), "sim");
    EXPECT_EQ(s.backend->devices()[0]->properties().copy_engines, 5u);
    EXPECT_EQ(s.backend->devices()[0]->properties().memory_bytes, 65536u);
}

TEST_F(Env, ProbeMakesZehalSimDevicesPeersOfOneAnother) {
    set("DEVICES", "3");
    set("COPY_ENGINES", "1");
    const hal::BackendStatus s = probe();
    ASSERT_TRUE(s.available) << s.reason;
    const auto& devices = s.backend->devices();
    ASSERT_EQ(devices.size(), 3u);
    for (const hal::DeviceRef& d : devices) {
        EXPECT_EQ(d->properties().copy_engines, 1u);
        for (const hal::DeviceRef& other : devices) EXPECT_TRUE(d->can_access_peer(*other));
    }
    EXPECT_NE(devices[0]->properties().uuid, devices[1]->properties().uuid);
    set("DEVICES", "0");
    const hal::BackendStatus none = probe();
    EXPECT_FALSE(none.available);
    EXPECT_EQ(none.reason.rfind("ZEHAL_SIM_DEVICES = 0", 0), 0u) << none.reason;
}

TEST_F(Env, ProbeReportsSettingsOutOfRange) {
    set("COMPUTE_ENGINES", "0");
    const hal::BackendStatus s = probe();
    EXPECT_EQ(s.name, "sim");
    EXPECT_FALSE(s.available);
    EXPECT_FALSE(s.reason.empty());
    EXPECT_EQ(s.backend, nullptr);
}

TEST_F(Env, ProbeNamesAMalformedVariableAndItsValue) {
    set("TIMER_HZ", "19.2MHz");
    const hal::BackendStatus s = probe();
    EXPECT_FALSE(s.available);
    EXPECT_EQ(s.backend, nullptr);
    EXPECT_EQ(s.reason.rfind("ZEHAL_SIM_TIMER_HZ = \"19.2MHz\"", 0), 0u) << s.reason;
}

}  // namespace
}  // namespace zehal::sim
