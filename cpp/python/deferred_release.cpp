#include "python/deferred_release.hpp"

#include <pybind11/pybind11.h>

#include <atomic>
#include <mutex>
#include <vector>

namespace zehal::py {
namespace {

// References given back (by keep-alives), waiting for a thread that holds the GIL. A release
// never takes the GIL: the thread that drops a keep-alive may hold the engine's lock, be the
// engine's watcher (joined by a thread that holds the GIL), or run while the interpreter
// exits; taking the GIL there could deadlock or touch a finalized interpreter. Nor does it
// drop a reference in place when it holds the GIL: a keep-alive goes in the middle of an
// engine call, and the finalizer the drop may run could close that engine under it.
class DeferredReleases {
public:
    // Takes over `objects` (owned references; nulls skipped) until drain(). Any thread, with
    // or without the GIL.
    void defer(std::span<PyObject* const> objects) noexcept {
        std::lock_guard lock(mutex_);
        // After interpreter exit began the references are forgotten (see shut_down()); so are
        // they when the list cannot grow: dropping them without the GIL is not an option.
        if (shut_down_) return;
        try {
            for (PyObject* o : objects)
                if (o) objects_.push_back(o);
        } catch (...) {
            return;
        }
        // relaxed: a hint for drain()'s quick check; the list itself is read under mutex_.
        any_.store(true, std::memory_order_relaxed);
        // A thread without the GIL asks the interpreter to drain at its next chance, unless it
        // drains itself on its way out of a binding; one with the GIL is inside a binding,
        // which drains before it returns.
        if (!call_scheduled_ && t_release_scopes == 0 && !PyGILState_Check())
            call_scheduled_ = Py_AddPendingCall(&DeferredReleases::pending_call, nullptr) == 0;
    }

    // Drops every reference deferred so far (GIL held). Dropping one may run Python code that
    // defers or drains again: the batch is taken out of the list first.
    void drain() noexcept {
        // relaxed: a reference deferred by another thread and missed here is dropped by the
        // next drain (its pending call, or the next binding); this thread's own are seen.
        if (!any_.load(std::memory_order_relaxed)) return;
        std::vector<PyObject*> batch;
        {
            std::lock_guard lock(mutex_);
            batch.swap(objects_);
            any_.store(false, std::memory_order_relaxed);
        }
        if (batch.empty()) return;
        PyObject *type, *value, *traceback;
        PyErr_Fetch(&type, &value, &traceback);
        for (PyObject* o : batch) Py_DECREF(o);
        PyErr_Restore(type, value, traceback);
        batch.clear();
        std::lock_guard lock(mutex_);
        if (objects_.empty()) objects_.swap(batch);  // keeps the capacity for the next batch
    }

    // At interpreter exit (atexit, GIL held): drains, then forgets every later reference.
    void shut_down() noexcept {
        drain();
        std::lock_guard lock(mutex_);
        shut_down_ = true;
    }

private:
    // Run by the interpreter (main thread, GIL held) after a release without the GIL.
    static int pending_call(void*);

    std::mutex mutex_;
    std::vector<PyObject*> objects_;  // owned references, guarded by mutex_
    bool call_scheduled_ = false;     // a pending call is queued, guarded by mutex_
    bool shut_down_ = false;          // interpreter exit began, guarded by mutex_
    std::atomic<bool> any_{false};    // objects_ may be non-empty
};

// Never destroyed: a keep-alive may be given back by a thread that outlives static
// destruction (an engine's watcher, a thread parked at interpreter exit).
DeferredReleases& deferred_releases() {
    static auto* releases = new DeferredReleases();
    return *releases;
}

int DeferredReleases::pending_call(void*) {
    DeferredReleases& d = deferred_releases();
    {
        std::lock_guard lock(d.mutex_);
        d.call_scheduled_ = false;
    }
    d.drain();
    return 0;
}

}  // namespace

thread_local int t_release_scopes = 0;

void defer_release(std::span<PyObject* const> objects) noexcept { deferred_releases().defer(objects); }

void release_deferred() noexcept { deferred_releases().drain(); }

void install_deferred_release() {
    pybind11::module_::import("atexit").attr("register")(
        pybind11::cpp_function([] { deferred_releases().shut_down(); }));
}

}  // namespace zehal::py
