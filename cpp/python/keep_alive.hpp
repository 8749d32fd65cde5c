// What a command submitted from Python keeps alive until its engine sees it done (its
// operands, a use of each Buffer it touches), released on whatever thread sees it done.
#pragma once

#include <Python.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <span>

#include "aml/dma.hpp"
#include "aml/request.hpp"
#include "python/buffer.hpp"
#include "python/deferred_release.hpp"

namespace zehal::py {

// The operands of a command, kept alive while it may be pending: two references, no tuple.
// An operand of host memory from another exporter is a memoryview of it, whose export
// keeps the memory in place until dropped.
struct Operands {
    pybind11::object dst;
    pybind11::object src;
};

// The keep-alive (aml::Request::KeepAlive) of a command on `engine`, made with the GIL
// held: it takes over the references of `operands` and one use of each Buffer of `users`
// (nulls skipped; Buffer::close() waits until its uses are given back). Its engine drops it
// when it sees the command done, on whatever thread does, with or without the GIL: the
// uses are given back there, and the references handed to the deferred releases (python/deferred_release.hpp). On
// an exception (no memory) nothing is taken: `operands` still holds its references.
aml::Request::KeepAlive make_keep_alive(Operands&& operands, std::span<Buffer* const> users,
                                        const std::shared_ptr<aml::Dma>& engine);

}  // namespace zehal::py
