// Helpers shared by the metrics tests: fresh sim devices, groups by name, raw records.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

#include "common/clock.hpp"
#include "hal/sim/sim_backend.hpp"
#include "hal/trace_record.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"

namespace zehal::metrics::test {

using Record = hal::TraceRecord;
constexpr size_t kRecord = sizeof(Record);

// A fresh sim device with `config`.
inline hal::DeviceRef make_device(const sim::SimConfig& config = {}) {
    hal::DeviceRef d;
    EXPECT_EQ(sim::create_device(config, &d), ZE_RESULT_SUCCESS);
    return d;
}

// A sim device's configuration with its asynchronous trace source off, so that a test sees
// only the records its own commands make.
inline sim::SimConfig quiet() {
    sim::SimConfig c;
    c.async_records_per_s = 0;
    return c;
}

// The group of `device` called `name` (null when none).
inline MetricGroupRef group_named(const hal::DeviceRef& device, std::string_view name) {
    std::vector<MetricGroupRef> groups;
    EXPECT_EQ(metric_groups(device, &groups), ZE_RESULT_SUCCESS);
    for (auto& g : groups)
        if (g->info().name == name) return g;
    ADD_FAILURE() << "no group " << name;
    return nullptr;
}

// Activates `names` on `device` and makes a tracer of them (in that order).
inline std::shared_ptr<Tracer> make_tracer(const hal::DeviceRef& device, std::vector<std::string_view> names,
                                           uint32_t notify = 0, const TracerOptions& options = {},
                                           const hal::EventRef& event = nullptr) {
    std::vector<MetricGroupRef> groups;
    for (auto n : names) groups.push_back(group_named(device, n));
    EXPECT_EQ(activate(device, groups), ZE_RESULT_SUCCESS);
    std::vector<const MetricGroup*> raw;
    for (auto& g : groups) raw.push_back(g.get());
    std::shared_ptr<Tracer> t;
    EXPECT_EQ(Tracer::create(device, raw, &notify, event, &t, options), ZE_RESULT_SUCCESS);
    return t;
}

// Records in raw bytes.
inline std::vector<Record> records_of(const std::vector<uint8_t>& raw) {
    EXPECT_EQ(raw.size() % kRecord, 0u);
    std::vector<Record> out(raw.size() / kRecord);
    if (!raw.empty()) std::memcpy(out.data(), raw.data(), out.size() * kRecord);
    return out;
}

// Reads until the tracer says NOT_READY (disabled and drained), at most `limit` long.
inline std::vector<uint8_t> read_until_drained(Tracer& t,
                                               std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
    std::vector<uint8_t> all;
    std::vector<uint8_t> buf(1 << 20);
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
        size_t size = buf.size();
        const ze_result_t r = t.read(&size, buf.data());
        EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_NOT_READY || r == ZE_RESULT_WARNING_DROPPED_DATA) << r;
        all.insert(all.end(), buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(size));
        if (r == ZE_RESULT_NOT_READY) break;
        if (std::chrono::steady_clock::now() > deadline) {
            ADD_FAILURE() << "tracer never drained";
            break;
        }
        if (size == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return all;
}

// Runs `cond` until true or `limit` passed (to avoid a hang, never to judge speed).
template <typename F>
bool eventually(F cond, std::chrono::milliseconds limit = std::chrono::milliseconds(10000)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!cond()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    return true;
}

}  // namespace zehal::metrics::test
