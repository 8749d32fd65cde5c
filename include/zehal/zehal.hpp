// zehal's public C++ API, all of it: devices, areas and buffers, DMA engines and requests,
// events with kernel timestamps, metric groups, the tracer and the decoder. Header-only
// over the C API that libzehal.so exports (docs/cpp_api.md); link zehal::zehal.
#pragma once

#include <zehal/area.hpp>
#include <zehal/device.hpp>
#include <zehal/dma.hpp>
#include <zehal/error.hpp>
#include <zehal/events.hpp>
#include <zehal/metrics.hpp>
#include <zehal/version.h>
