// The native benchmarks of bench/benchmarks.hpp, as functions returning rows (dicts).
#include <pybind11/stl.h>

#include <vector>

#include "benchmarks.hpp"
#include "bindings.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"

namespace zehal::py {
namespace {

pyb::list rows(const std::vector<bench::Row>& rs) {
    pyb::list out;
    for (const bench::Row& r : rs) {
        pyb::dict d;
        d["suite"] = r.suite;
        d["name"] = r.name;
        d["value"] = r.value;
        d["unit"] = r.unit;
        d["baseline"] = r.baseline;
        d["baseline_name"] = r.baseline_name;
        d["ratio"] = r.ratio;
        d["note"] = r.note;
        out.append(std::move(d));
    }
    return out;
}

bench::Options options(bool quick, pyb::handle max_bytes) {
    bench::Options o;
    o.quick = quick;
    if (!max_bytes.is_none()) o.max_bytes = int_arg<size_t>(max_bytes, "max_bytes", ZE_RESULT_ERROR_INVALID_SIZE);
    return o;
}

// Binds `fn(device, options)` as `name(device=None, *, quick=False, max_bytes=None)`; the
// benchmark runs without the GIL.
template <typename Fn>
void def_device_bench(pyb::module_& m, const char* name, Fn fn, const char* doc) {
    m.def(
        name,
        [fn](const hal::DeviceRef& device, bool quick, pyb::handle max_bytes) {
            const hal::DeviceRef d = device_or_default(device);
            const bench::Options o = options(quick, max_bytes);
            std::vector<bench::Row> r;
            r = without_gil([&] { return fn(d, o); });
            return rows(r);
        },
        pyb::arg("device") = pyb::none(), pyb::kw_only(), pyb::arg("quick") = false,
        pyb::arg("max_bytes") = pyb::none(), doc);
}

}  // namespace

void bind_bench(pyb::module_& m) {
    pyb::module_ b = m.def_submodule("benchmarks", "Native benchmarks: each returns a list of rows (dicts with suite, "
                                                   "name, value, unit, baseline, baseline_name, ratio, note).");
    def_device_bench(b, "copy_bandwidth", &bench::copy_bandwidth,
                     "Copy bandwidth through a queue (h->d, d->h, d->d, h->h, 4 KiB to max_bytes) beside memcpy.");
    def_device_bench(b, "pool_latency", &bench::pool_latency,
                     "Pooled device area mmap+munmap (4 KiB, 1 MiB; 1 to 16 threads) beside malloc+free, the "
                     "unpooled area and the HAL's allocate+free.");
    def_device_bench(b, "aml_latency", &bench::aml_latency,
                     "64-byte AML request round trip (submit + wait) and area mmap+munmap latency, from C++.");
    def_device_bench(b, "timestamp_query", &bench::timestamp_query,
                     "Cost of one kernel and one synchronized timestamp query.");
    def_device_bench(b, "tracer_throughput", &bench::tracer_throughput,
                     "Tracer end to end: records/s drained with zero drops while a reader keeps up.");
    def_device_bench(b, "cuda_vs_raw", &bench::cuda_vs_raw,
                     "CUDA devices only (empty elsewhere): zehal beside the raw driver API and CUPTI.");
    b.def(
        "peer_copy",
        [](const hal::DeviceRef& a, const hal::DeviceRef& peer, bool quick, pyb::handle max_bytes) {
            if (!a || !peer) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "peer_copy: a device is None");
            const bench::Options o = options(quick, max_bytes);
            std::vector<bench::Row> r;
            r = without_gil([&] { return bench::peer_copy(a, peer, o); });
            return rows(r);
        },
        pyb::arg("device"), pyb::arg("peer"), pyb::kw_only(), pyb::arg("quick") = false,
        pyb::arg("max_bytes") = pyb::none(),
        "Two devices of one backend: device's memory to peer's on device's copy engine, and both directions at "
        "once (4 KiB, 1 MiB, max_bytes), beside cuMemcpyPeerAsync (CUDA) or memcpy (sim).");
    b.def(
        "ring_throughput",
        [](bool quick) {
            const bench::Options o = options(quick, pyb::none());
            std::vector<bench::Row> r;
            r = without_gil([&] { return bench::ring_throughput(o); });
            return rows(r);
        },
        pyb::kw_only(), pyb::arg("quick") = false,
        "SPSC byte ring throughput for 32-byte records beside a mutex-protected ring.");
}

}  // namespace zehal::py
