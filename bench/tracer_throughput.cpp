// Tracer end to end: hardware source → drain thread → SPSC ring → reader, in records/s,
// at the highest offered rate the reader keeps up with (zero drops).
#include <chrono>
#include <thread>
#include <vector>

#include "benchmarks.hpp"
#include "common/clock.hpp"
#include "hal/sim/sim_backend.hpp"
#include "hal/trace_record.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"

namespace zehal::bench {
namespace {

using namespace std::chrono;

struct Outcome {
    bool ok = false;
    double records_per_s = 0;  // hardware records received per second of tracing
    uint64_t produced = 0;
    uint64_t dropped = 0;
};

// Traces the tracer-based groups named in `names` on `device` for `window` while one
// reader drains; `drive` (may be empty) generates work meanwhile.
template <typename Drive>
Outcome trace_for(const hal::DeviceRef& device, std::initializer_list<std::string_view> names, nanoseconds window,
                  Drive drive) {
    Outcome out;
    std::vector<metrics::MetricGroupRef> all, chosen;
    if (metrics::metric_groups(device, &all) != ZE_RESULT_SUCCESS) return out;
    for (auto& g : all)
        for (auto n : names)
            if (g->info().name == n && g->tracer_based()) chosen.push_back(g);
    if (chosen.empty()) {
        for (auto& g : all)
            if (g->tracer_based()) {
                chosen.push_back(g);
                break;
            }
    }
    if (chosen.empty() || metrics::activate(device, chosen) != ZE_RESULT_SUCCESS) return out;
    std::vector<const metrics::MetricGroup*> raw;
    for (auto& g : chosen) raw.push_back(g.get());
    std::shared_ptr<metrics::Tracer> tracer;
    uint32_t notify = 0;
    if (metrics::Tracer::create(device, raw, &notify, nullptr, &tracer) != ZE_RESULT_SUCCESS) return out;

    std::vector<uint8_t> buf(4u << 20);
    uint64_t samples = 0;
    auto take = [&](size_t size) {
        const auto* r = reinterpret_cast<const hal::TraceRecord*>(buf.data());
        for (size_t i = 0; i < size / sizeof(hal::TraceRecord); ++i)
            samples += r[i].kind == hal::kRecordSample || r[i].kind == hal::kRecordExportWrite;
    };
    if (tracer->enable(true) != ZE_RESULT_SUCCESS) return out;
    const auto t0 = steady_clock::now();
    std::thread driver([&] { drive(t0 + window); });
    while (steady_clock::now() < t0 + window) {
        size_t size = buf.size();
        tracer->read(&size, buf.data());
        take(size);
        if (size == 0) std::this_thread::sleep_for(microseconds(100));
    }
    driver.join();
    tracer->disable(true);
    const double seconds = duration<double>(steady_clock::now() - t0).count();
    for (;;) {
        size_t size = buf.size();
        const ze_result_t r = tracer->read(&size, buf.data());
        take(size);
        if (r == ZE_RESULT_NOT_READY || (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_WARNING_DROPPED_DATA)) break;
    }
    out.produced = device->trace_source()->produced();
    out.dropped = tracer->dropped();
    out.records_per_s = static_cast<double>(samples) / seconds;
    out.ok = true;
    tracer->destroy();
    return out;
}

Row tracer_row(const std::string& name, const Outcome& o, double offered) {
    Row row;
    row.suite = "tracer";
    row.name = name;
    row.value = o.records_per_s / 1e6;
    row.unit = "Mrec/s";
    row.baseline = offered / 1e6;
    row.baseline_name = "offered by the source";
    row.ratio = offered > 0 ? o.records_per_s / offered : 0;
    return row;
}

}  // namespace

std::vector<Row> tracer_throughput(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device || !device->trace_source()) return rows;
    const nanoseconds window = options.quick ? milliseconds(150) : milliseconds(600);

    if (device->backend_name() == "sim") {
        // Fresh sim devices whose asynchronous source offers more and more records per
        // second; the best rate that arrives whole is the figure.
        const std::vector<uint64_t> rates = options.quick ? std::vector<uint64_t>{1'000'000, 4'000'000}
                                                          : std::vector<uint64_t>{1'000'000, 2'000'000, 4'000'000,
                                                                                  8'000'000, 16'000'000, 32'000'000};
        Outcome best;
        uint64_t best_rate = 0;
        for (uint64_t rate : rates) {
            sim::SimConfig c;
            c.async_records_per_s = rate;
            hal::DeviceRef d;
            if (sim::create_device(c, &d) != ZE_RESULT_SUCCESS) break;
            const Outcome o = trace_for(d, {"AsyncEvents"}, window, [](steady_clock::time_point) {});
            if (!o.ok || o.dropped != 0) break;
            best = o;
            best_rate = rate;
        }
        if (best_rate) rows.push_back(tracer_row("async source -> reader, zero drops", best, static_cast<double>(best_rate)));
        return rows;
    }

    // Other backends: records of commands, as many as the device runs in the window.
    void* p = nullptr;
    std::shared_ptr<hal::Queue> q;
    if (device->allocate(hal::MemoryKind::device, 4096, 64, 0, 0, &p) != ZE_RESULT_SUCCESS) return rows;
    if (device->create_queue(hal::kCopyOrdinal, 0, &q) == ZE_RESULT_SUCCESS ||
        device->create_queue(hal::kComputeOrdinal, 0, &q) == ZE_RESULT_SUCCESS) {
        const Outcome o = trace_for(device, {"EngineEvents"}, window, [&](steady_clock::time_point until) {
            const uint8_t pattern = 1;
            while (steady_clock::now() < until) {
                for (int i = 0; i < 64; ++i) q->append_fill(p, &pattern, 1, 4096, nullptr, {});
                q->host_synchronize(kWaitForever);
            }
        });
        if (o.ok) {
            Row row = tracer_row("commands -> reader", o, static_cast<double>(o.produced) / duration<double>(window).count());
            row.name += o.dropped ? " (with drops)" : ", zero drops";
            rows.push_back(row);
        }
    }
    device->free(p);
    return rows;
}

}  // namespace zehal::bench
