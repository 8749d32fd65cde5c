// The _zehal extension module: every part of bindings.hpp, in dependency order.
#include "bindings.hpp"

PYBIND11_MODULE(_zehal, m) {
    m.doc() = "zehal native core: devices, AML areas and DMA, timestamps, metrics";
    zehal::py::bind_errors(m);
    zehal::py::bind_device(m);
    zehal::py::bind_events(m);
    zehal::py::bind_buffer(m);
    zehal::py::bind_area(m);
    zehal::py::bind_layout(m);
    zehal::py::bind_dma(m);
    zehal::py::bind_kernels(m);
    zehal::py::bind_area_pool(m);
    zehal::py::bind_metrics(m);
    zehal::py::bind_tracer(m);
    zehal::py::bind_sampling(m);
    zehal::py::bind_timed_method(m);
    zehal::py::bind_bench(m);
}
