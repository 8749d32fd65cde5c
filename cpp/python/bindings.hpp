// The parts of the _zehal module, one per file, called in this order by module.cpp.
#pragma once

#include <pybind11/pybind11.h>

#include <string_view>

#include "zehal/ze_result.h"
#include "hal/device.hpp"
#include "python/made_caster.hpp"

namespace zehal::py {

namespace pyb = pybind11;

// errors.cpp: zehal.Error and its subclasses.
void bind_errors(pyb::module_& m);
// Raises the zehal.Error subclass for `r` (carrying code, result name and AML errno)
// with `what` in the message; returns when r is SUCCESS.
void check(ze_result_t r, std::string_view what);
// Raises the zehal.Error subclass for a negative AML code (-AML_E*), as check() does.
void check_aml(int aml_code, std::string_view what);

// bind_device.cpp: backends(), devices(), default_device(), sim_device(), Device.
void bind_device(pyb::module_& m);
// The device a Python `device=None` argument means: the default device.
hal::DeviceRef device_or_default(const hal::DeviceRef& device);

// bind_events.cpp: EventPool, Event (kernel and synchronized timestamps).
void bind_events(pyb::module_& m);

// bind_buffer.cpp: Buffer (buffer protocol, DLPack, __cuda_array_interface__).
void bind_buffer(pyb::module_& m);
// bind_area.cpp: Area and Layout.
void bind_area(pyb::module_& m);
void bind_layout(pyb::module_& m);
// bind_dma.cpp: Dma and Request (whose type is request_object.cpp's).
void bind_dma(pyb::module_& m);

// bind_kernels.cpp: Module, Kernel and Dma.launch (after bind_dma: it extends Dma).
void bind_kernels(pyb::module_& m);

// bind_pool.cpp: Area.pool, Area.stats, Area.trim (after bind_area: it extends Area).
void bind_area_pool(pyb::module_& m);

// bind_metrics.cpp: MetricGroup, Metric, activate_metric_groups, MetricTracer,
// MetricDecoder, timeline helpers.
void bind_metrics(pyb::module_& m);
// bind_tracer.cpp: MetricTracer, MetricDecoder and the record and entry dtypes.
void bind_tracer(pyb::module_& m);
// bind_sampling.cpp: MetricStreamer (the sampled counters of time-based groups).
void bind_sampling(pyb::module_& m);
// Device.metric_groups(): list of MetricGroup objects of `device`.
pyb::list device_metric_groups(const hal::DeviceRef& device);

// timed_method.cpp: TimedMethod, a method timed as a host API call while a trace records them.
void bind_timed_method(pyb::module_& m);

// bind_bench.cpp: the native benchmarks of bench/benchmarks.hpp.
void bind_bench(pyb::module_& m);

}  // namespace zehal::py
