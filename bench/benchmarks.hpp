// Native benchmarks behind `zehal bench`. Each compares zehal with a baseline measured in
// the same run (memcpy, the backend's raw API, a mutex ring) and reports the ratio.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "hal/device.hpp"

namespace zehal::bench {

// One line of a benchmark table. `ratio` is value / baseline for rates (higher is
// better) and baseline / value for times (higher is better too), 0 without a baseline.
struct Row {
    std::string suite;          // "copy", "request", "area", "timestamps", "ring", "tracer", ...
    std::string name;           // e.g. "host->device 64 MiB"
    double value = 0;           // zehal's figure
    std::string unit;           // "GB/s", "us", "Mrec/s", ...
    double baseline = 0;        // the baseline's figure in the same unit (0: none)
    std::string baseline_name;  // "memcpy", "cuMemcpyAsync", "mutex ring", ...
    double ratio = 0;
    std::string note;  // the known cause of a surprising ratio (e.g. above 1), or empty
};

// How long to measure: `quick` keeps every suite to a fraction of a second (tests, CI).
struct Options {
    bool quick = false;
    size_t max_bytes = 256u << 20;  // largest copy size
};

// Copy bandwidth through a queue for host->device, device->host, device->device and
// host->host, 4 KiB to max_bytes, beside single-thread memcpy (or the backend's raw copy).
std::vector<Row> copy_bandwidth(const hal::DeviceRef& device, const Options& options);
// 64-byte AML request round trip (submit + wait) and area mmap+munmap latency.
std::vector<Row> aml_latency(const hal::DeviceRef& device, const Options& options);
// Pooled device area mmap+munmap (4 KiB, 1 MiB; 1, 2, 4, 16 threads) beside malloc+free,
// the unpooled area and the HAL's allocate+free.
std::vector<Row> pool_latency(const hal::DeviceRef& device, const Options& options);
// Cost of one kernel and one synchronized timestamp query.
std::vector<Row> timestamp_query(const hal::DeviceRef& device, const Options& options);
// SPSC byte ring throughput for 32-byte records beside a mutex-protected ring.
std::vector<Row> ring_throughput(const Options& options);
// Tracer end to end: records/s drained with zero drops while a reader keeps up.
std::vector<Row> tracer_throughput(const hal::DeviceRef& device, const Options& options);
// CUDA devices only (empty elsewhere): pinned 256 MiB H2D/D2H and D2D bandwidth, 64-byte
// request round trip, area mmap+munmap and tracer overhead per kernel, each beside the raw
// driver API / CUPTI in the same process.
std::vector<Row> cuda_vs_raw(const hal::DeviceRef& device, const Options& options);
// Two devices of one backend: A's device memory to B's on A's copy engine, and both
// directions at once, 4 KiB, 1 MiB and max_bytes, beside cuMemcpyPeerAsync (CUDA) or memcpy
// (sim) in the same run. Empty when a and b are the same device.
std::vector<Row> peer_copy(const hal::DeviceRef& a, const hal::DeviceRef& b, const Options& options);

}  // namespace zehal::bench
