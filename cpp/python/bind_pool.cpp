// Pooled areas from Python (contract §10): Area.pool, Area.stats, Area.trim.
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "aml/area.hpp"
#include "python/bindings.hpp"
#include "python/gil.hpp"
#include "python/int_arg.hpp"

namespace zehal::py {

namespace {

using AreaRef = std::shared_ptr<aml::Area>;

// The pool of `area`, or UnsupportedError naming the call for an area that is not a pool.
aml::Pool& pool_of(const aml::Area& area, const char* what) {
    if (!area.pool())
        check(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
              std::string(what) + ": the area is not a pool (Area.pool makes one)");
    return *area.pool();
}

AreaRef make_pool(const AreaRef& upstream, pyb::handle initial_bytes, pyb::handle maximum_bytes) {
    if (!upstream) check(ZE_RESULT_ERROR_INVALID_NULL_POINTER, "Area.pool: upstream is None");
    const auto initial = int_arg<size_t>(initial_bytes, "Area.pool: initial_bytes", ZE_RESULT_ERROR_INVALID_SIZE);
    const size_t maximum = maximum_bytes.is_none() ? 0
                                                   : int_arg<size_t>(maximum_bytes, "Area.pool: maximum_bytes",
                                                                     ZE_RESULT_ERROR_INVALID_SIZE);
    if (!maximum_bytes.is_none() && maximum == 0)
        check(ZE_RESULT_ERROR_INVALID_SIZE, "Area.pool: maximum_bytes = 0 (None means no limit)");
    if (maximum && initial > maximum)
        check(ZE_RESULT_ERROR_INVALID_ARGUMENT, "Area.pool: initial_bytes = " + std::to_string(initial) +
                                                    " is above maximum_bytes = " + std::to_string(maximum));
    if (upstream->closed()) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "Area.pool: the upstream area is closed");
    AreaRef pool;
    const ze_result_t r = without_gil([&] { return aml::Area::create_pool(upstream, initial, maximum, &pool); });
    check(r, "Area.pool");
    return pool;
}

pyb::dict pool_stats(const aml::Area& area) {
    const aml::PoolStats s = pool_of(area, "Area.stats").stats();
    pyb::dict d;
    d["bytes_in_use"] = s.bytes_in_use;
    d["peak_bytes_in_use"] = s.peak_bytes_in_use;
    d["bytes_reserved"] = s.bytes_reserved;
    d["allocations"] = s.allocations;
    d["total_allocations"] = s.total_allocations;
    d["upstream_allocations"] = s.upstream_allocations;
    d["cache_hits"] = s.cache_hits;
    return d;
}

}  // namespace

void bind_area_pool(pyb::module_& m) {
    auto cls = pyb::reinterpret_borrow<pyb::class_<aml::Area, AreaRef>>(m.attr("Area"));
    cls.def_static("_pool", &make_pool, pyb::arg("upstream"), pyb::arg("initial_bytes") = 0,
                   pyb::arg("maximum_bytes") = pyb::none(),
                   "A pooled area over `upstream` (same kind, device and alignment): mmap serves memory it keeps, "
                   "taken from upstream in large chunks, with no driver call. initial_bytes are taken at once; the "
                   "pool never holds more than maximum_bytes (None: no limit), beyond which mmap raises "
                   "OutOfMemoryError and changes nothing. The upstream stays alive while the pool lives.");
    cls.def("stats", &pool_stats,
            "A pool's statistics: bytes_in_use, peak_bytes_in_use, bytes_reserved, allocations (live), "
            "total_allocations, upstream_allocations, cache_hits. UnsupportedError for other areas.");
    cls.def(
        "trim",
        [](const aml::Area& area) {
            aml::Pool& pool = pool_of(area, "Area.trim");
            check(without_gil([&] { return pool.trim(); }), "Area.trim");
        },
        "Gives back to upstream every chunk of a pool that nothing is mapped from.");
    cls.def_property_readonly(
        "is_pool", [](const aml::Area& area) { return area.pool() != nullptr; }, "True for a pooled area.");
}

}  // namespace zehal::py
