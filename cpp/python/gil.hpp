// Blocking calls run without the GIL through without_gil().
#pragma once

#include <Python.h>
#include <cxxabi.h>

#include <utility>

namespace zehal::py {

// Runs `body` with the GIL released and returns its result. The GIL is taken back by a
// plain call, never by a destructor: at interpreter exit CPython ends a daemon thread that
// takes the GIL back with pthread_exit, and that forced unwind aborts the process when it
// meets a noexcept frame (every destructor is one), as pybind11's gil_scoped_release is.
template <typename Body>
auto without_gil(Body&& body) -> decltype(body()) {
    PyThreadState* state = PyEval_SaveThread();
    try {
        if constexpr (std::is_void_v<decltype(body())>) {
            std::forward<Body>(body)();
            PyEval_RestoreThread(state);
        } else {
            auto result = std::forward<Body>(body)();
            PyEval_RestoreThread(state);
            return result;
        }
    } catch (abi::__forced_unwind&) {
        throw;  // the thread is being ended inside PyEval_RestoreThread: let it go
    } catch (...) {
        PyEval_RestoreThread(state);
        throw;
    }
}

}  // namespace zehal::py
