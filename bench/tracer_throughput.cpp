// Tracer end to end: hardware source → drain thread → SPSC ring → reader, in records/s,
// at the highest offered rate the reader keeps up with (zero drops); and drain only: a
// pre-filled hardware buffer → reader.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "benchmarks.hpp"
#include "common/clock.hpp"
#include "hal/sim/sim_backend.hpp"
#include "hal/trace_record.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"
#include "tracer_setup.hpp"

namespace zehal::bench {
namespace {

using namespace std::chrono;

constexpr size_t kBufferBytes = 16u << 20;  // hardware buffer and host ring of the sim rows

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
                  size_t ring_bytes, Drive drive) {
    Outcome out;
    std::vector<metrics::MetricGroupRef> chosen;
    const std::shared_ptr<metrics::Tracer> tracer = open_tracer(device, names, ring_bytes, &chosen);
    if (!tracer) return out;

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

// Fresh sim devices whose asynchronous source offers `rates` records per second in turn
// (hardware buffer and host ring of the sizes given); the best rate that arrives whole
// is the figure, in *row. False when not even the first rate arrives whole.
bool best_zero_drop_rate(const std::vector<uint64_t>& rates, nanoseconds window, size_t buffer_bytes, size_t ring_bytes,
                         const std::string& what, Row* row) {
    Outcome best;
    uint64_t best_rate = 0;
    for (uint64_t rate : rates) {
        sim::SimConfig c;
        c.async_records_per_s = rate;
        c.trace_buffer_bytes = buffer_bytes;
        hal::DeviceRef d;
        if (sim::create_device(c, &d) != ZE_RESULT_SUCCESS) break;
        const Outcome o = trace_for(d, {"AsyncEvents"}, window, ring_bytes, [](steady_clock::time_point) {});
        if (!o.ok || o.dropped != 0) break;
        best = o;
        best_rate = rate;
    }
    if (best_rate)
        *row = tracer_row("async source -> reader, " + what + ", zero drops", best, static_cast<double>(best_rate));
    return best_rate != 0;
}

// Records per second from a hardware buffer pre-filled with `records` (the sim's burst
// at start) to the reader, timed from the return of enable to the last record read; the
// records go through the drain thread and the host ring (16 MiB), which is smaller than
// the burst in the full run.
// 0 when a record was lost or the reader did not get them all within 5 s.
double drain_prefilled(size_t records) {
    sim::SimConfig c;
    c.async_records_per_s = 0;
    c.async_burst_records = records;
    // Twice the burst: a hardware buffer at most three quarters full keeps its records
    // while the host ring has no room (docs/metrics.md).
    c.trace_buffer_bytes = 2 * records * sizeof(hal::TraceRecord);
    hal::DeviceRef d;
    if (sim::create_device(c, &d) != ZE_RESULT_SUCCESS) return 0;
    std::vector<metrics::MetricGroupRef> chosen;
    const std::shared_ptr<metrics::Tracer> tracer = open_tracer(d, {"AsyncEvents"}, kBufferBytes, &chosen);
    if (!tracer) return 0;
    std::vector<hal::TraceRecord> buf(64u << 10);
    if (tracer->enable(true) != ZE_RESULT_SUCCESS) return 0;
    const auto t0 = steady_clock::now();
    size_t samples = 0;
    while (samples < records && steady_clock::now() < t0 + seconds(5)) {
        size_t size = buf.size() * sizeof(hal::TraceRecord);
        tracer->read(&size, buf.data());
        for (size_t i = 0; i < size / sizeof(hal::TraceRecord); ++i) samples += buf[i].kind == hal::kRecordSample;
    }
    const double elapsed = duration<double>(steady_clock::now() - t0).count();
    const bool whole = samples == records && tracer->dropped() == 0;
    tracer->disable(true);
    tracer->destroy();
    return whole ? static_cast<double>(records) / elapsed : 0;
}

// Records per second of one memcpy of `records` records between two touched buffers.
double memcpy_records(size_t records) {
    std::vector<hal::TraceRecord> a(records), b(records);
    std::memcpy(b.data(), a.data(), records * sizeof(hal::TraceRecord));
    const auto t0 = steady_clock::now();
    std::memcpy(a.data(), b.data(), records * sizeof(hal::TraceRecord));
    asm volatile("" : : "r"(a.data()) : "memory");
    return static_cast<double>(records) / duration<double>(steady_clock::now() - t0).count();
}

}  // namespace

std::vector<Row> tracer_throughput(const hal::DeviceRef& device, const Options& options) {
    std::vector<Row> rows;
    if (!device || !device->trace_source()) return rows;
    const nanoseconds window = options.quick ? milliseconds(150) : milliseconds(600);

    if (device->backend_name() == "sim") {
        // 16 MiB buffers: a pause of the drain thread or the reader of up to ~25 ms at
        // 20 M records/s costs nothing (the machine is shared; the figure is the drain
        // loop's, not the scheduler's). The defaults (1 MiB hardware buffer, 4 MiB ring)
        // hold 1.6 ms of records at that rate.
        const std::vector<uint64_t> rates = options.quick ? std::vector<uint64_t>{1'000'000, 4'000'000}
                                                          : std::vector<uint64_t>{1'000'000,  2'000'000,  4'000'000,
                                                                                  8'000'000,  16'000'000, 24'000'000,
                                                                                  32'000'000, 48'000'000, 64'000'000};
        const size_t defaults_ring = metrics::TracerOptions{}.ring_bytes;
        if (Row r; best_zero_drop_rate(rates, window, kBufferBytes, kBufferBytes, "16 MiB buffers", &r))
            rows.push_back(r);
        if (Row r; best_zero_drop_rate(rates, window, sim::SimConfig{}.trace_buffer_bytes, defaults_ring,
                                       "default buffers (1 MiB, ring 4 MiB)", &r))
            rows.push_back(r);

        // Drain only: a full hardware buffer to the reader, best of interleaved rounds
        // beside one memcpy of the same records.
        const size_t records = options.quick ? (256u << 10) : (2u << 20);
        double drained = 0, copied = 0;
        for (int round = 0; round < (options.quick ? 1 : 3); ++round) {
            copied = std::max(copied, memcpy_records(records));
            drained = std::max(drained, drain_prefilled(records));
        }
        if (drained > 0) {
            Row row;
            row.suite = "tracer";
            row.name = "pre-filled hardware buffer (" + std::to_string(records >> 20 ? records >> 20 : records >> 10) +
                       (records >> 20 ? " M" : " K") + " records) -> reader, zero drops";
            row.value = drained / 1e6;
            row.unit = "Mrec/s";
            row.baseline = copied / 1e6;
            row.baseline_name = "one memcpy of the records";
            row.ratio = drained / copied;
            rows.push_back(row);
        }
        return rows;
    }

    // Other backends: records of commands, as many as the device runs in the window.
    void* p = nullptr;
    std::shared_ptr<hal::Queue> q;
    if (device->allocate(hal::MemoryKind::device, 4096, 64, 0, 0, &p) != ZE_RESULT_SUCCESS) return rows;
    if (device->create_queue(hal::kCopyOrdinal, 0, &q) == ZE_RESULT_SUCCESS ||
        device->create_queue(hal::kComputeOrdinal, 0, &q) == ZE_RESULT_SUCCESS) {
        const Outcome o = trace_for(device, {"EngineEvents"}, window, metrics::TracerOptions{}.ring_bytes,
                                    [&](steady_clock::time_point until) {
                                        const uint8_t pattern = 1;
                                        while (steady_clock::now() < until) {
                                            for (int i = 0; i < 64; ++i)
                                                q->append_fill(p, &pattern, 1, 4096, nullptr, {});
                                            q->host_synchronize(kWaitForever);
                                        }
                                    });
        if (o.ok) {
            Row row = tracer_row("commands -> reader", o,
                                 static_cast<double>(o.produced) / duration<double>(window).count());
            row.name += o.dropped ? " (with drops)" : ", zero drops";
            rows.push_back(row);
        }
    }
    device->free(p);
    return rows;
}

}  // namespace zehal::bench
