// Commands other than copies on a zehal.Dma engine (kernel launches): what the Dma binding
// needs to submit one as it submits a copy, with a Request and the operands kept alive.
#pragma once

#include <Python.h>

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "aml/dma.hpp"
#include "aml/request.hpp"
#include "python/buffer.hpp"
#include "python/keep_alive.hpp"

namespace zehal::py {

// One command for an engine. `append` reads its operands' native state and appends it to
// the engine with the keep-alive it is given, and a request when asked for one (it runs
// with the GIL held and calls no Python code, so what it reads is what the command uses).
struct Submission {
    std::string_view what;  // the API name, for error messages
    std::function<ze_result_t(aml::Dma&, std::shared_ptr<aml::Request>*, aml::Request::KeepAlive)> append;
    std::vector<Buffer*> users;  // zehal Buffers the command uses: closing one waits for it
    Operands operands;           // Python objects kept alive until it completes
};

// Submits `submission` on the engine of `dma` (a zehal.Dma): a new Request object, or None
// without `want_request` (fire-and-forget: Dma.barrier() waits for it). Raises on failure.
PyObject* submit_on_dma(PyObject* dma, Submission submission, bool want_request);

}  // namespace zehal::py
