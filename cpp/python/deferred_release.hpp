// References given back on any thread, dropped only where the GIL is held.
#pragma once

#include <Python.h>

#include <span>

namespace zehal::py {

// Takes over `objects` (owned references; nulls skipped) until a thread holding the GIL
// drops them (release_deferred()). Any thread, with or without the GIL; never takes it.
void defer_release(std::span<PyObject* const> objects) noexcept;

// Drops the references that keep-alives gave back (GIL held). Every binding that may see a
// command done calls it before it returns (ReleaseDeferredOnExit), so that what a wait,
// barrier, close or poll released is gone when it returns; a pending call (Py_AddPendingCall)
// scheduled by a release without the GIL does it for the other threads (an engine's watcher,
// a C caller). Leaves the caller's Python error state as it was.
void release_deferred() noexcept;

// The ReleaseDeferredOnExit objects alive on this thread: while there is one, the thread
// drops what it releases itself before it leaves zehal, so a release there (without the
// GIL too) schedules no pending call.
extern thread_local int t_release_scopes;

// Calls release_deferred() when it goes: declared first in a binding, it runs once the
// binding is done with the engine, whether it returns or throws.
struct ReleaseDeferredOnExit {
    ReleaseDeferredOnExit() noexcept { ++t_release_scopes; }
    ReleaseDeferredOnExit(const ReleaseDeferredOnExit&) = delete;
    ReleaseDeferredOnExit& operator=(const ReleaseDeferredOnExit&) = delete;
    ~ReleaseDeferredOnExit() {
        --t_release_scopes;
        release_deferred();
    }
};

// Registers, with Python's atexit, the end of deferred releases: what is pending then is
// dropped (GIL held, the interpreter whole), and references given back afterwards (engines
// closed during finalization, threads still waiting) are forgotten, never touched: Python
// may be gone by the time they are given back.
void install_deferred_release();

}  // namespace zehal::py
