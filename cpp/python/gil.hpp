// Blocking calls run without the GIL through without_gil().
#pragma once

#include <Python.h>
#include <cxxabi.h>
#include <unistd.h>

#include <utility>

namespace zehal::py {

// Runs `body` with the GIL released and returns its result. The GIL is taken back by a
// plain call, never by a destructor. At interpreter exit CPython ends a daemon thread that
// takes the GIL back with pthread_exit: that forced unwind would abort the process in a
// noexcept frame (a destructor, as pybind11's gil_scoped_release is), and would run the
// destructors of the caller's Python objects without the GIL. So it goes no further than
// here: the thread parks for good, and ends with the process.
// no_sanitize("null"): the handler of a forced unwind binds its reference to the null
// object pointer that libstdc++ gives a foreign exception (the reference is never read);
// UBSan would report that binding at every such exit.
template <typename Body>
__attribute__((no_sanitize("null"))) auto without_gil(Body&& body) -> decltype(body()) {
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
        // Never leaves the handler (leaving it without a rethrow would abort): the process
        // is exiting, and this thread waits for that, holding what its frames hold.
        for (;;) pause();
    } catch (...) {
        PyEval_RestoreThread(state);
        throw;
    }
}

}  // namespace zehal::py
