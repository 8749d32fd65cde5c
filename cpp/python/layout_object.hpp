// A dense layout as Python holds it (shared by the layout and DMA bindings).
#pragma once

#include <memory>

#include "aml/layout.hpp"
#include "python/buffer.hpp"

namespace zehal::py {

// A dense layout over a Buffer, which it keeps alive.
struct PyLayout {
    std::unique_ptr<aml::Layout> layout;
    BufferRef buffer;
};

}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::PyLayout)
