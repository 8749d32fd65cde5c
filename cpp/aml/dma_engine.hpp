// The shared state of a Dma engine: its queue, event cache and the requests it tracks.
// Internal to cpp/aml: Dma is the public face, Request keeps the engine alive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "zehal/ze_result.h"
#include "aml/event_cache.hpp"
#include "aml/request.hpp"
#include "hal/device.hpp"
#include "hal/queue.hpp"

namespace zehal::aml::detail {

// Tracks requests in submission order in an intrusive list (a listed request is kept alive
// by the list), so that barriers and polls can mark them done. A request seen done (by its
// own wait() or flags(), or by a barrier) stays listed until the engine's next submission
// (after the command is handed to the queue), poll or pending() drops it: its teardown (the
// event back to the cache, the free) is then off the path from one copy's completion to the
// next copy's submission. close() drops every request. A request's keep-alive (Request) is
// dropped by whoever first sees it done, outside mutex_. Requests whose flags word is read
// without calls (C callers) are watched: a watcher thread, started on the first one and
// asleep while none is pending, polls every kWatchPeriod.
class Engine : public std::enable_shared_from_this<Engine> {
public:
    Engine(hal::DeviceRef device, std::shared_ptr<hal::Queue> queue);

    using KeepAlive = Request::KeepAlive;

    // A request whose copy will signal `signal` (null: an event of the cache).
    ze_result_t new_request(const hal::EventRef& signal, std::shared_ptr<Request>* out);
    // new_request() then append_copy() of that request (with `keep`), into *out on success.
    // A request without a signal is taken from the one made after the previous such copy
    // was submitted, while that copy ran: making it (an event from the cache, an
    // allocation) is off the path from one copy's completion to the next copy's submission.
    ze_result_t copy_with_request(void* dst, const void* src, size_t size, const hal::EventRef& signal, KeepAlive keep,
                                  std::shared_ptr<Request>* out);
    // Appends the copy of `size` bytes; `request` (may be null) gets its event signalled
    // and holds `keep` until it is seen done (a keep-alive needs a request). On failure
    // `keep` is dropped before the return. INVALID_NULL_POINTER, INVALID_SIZE (0),
    // INVALID_NULL_HANDLE once closed, INVALID_ARGUMENT for a request of another engine,
    // one that already has its copy, or a keep-alive without a request; else the queue's
    // result (OVERLAPPING_REGIONS, INVALID_SIZE past an allocation, ...).
    ze_result_t append_copy(void* dst, const void* src, size_t size, Request* request, const hal::EventRef& signal,
                            KeepAlive keep = {});
    // Appends the launch of `kernel` over `groups` work-groups (the queue snapshots its
    // arguments), tracked as append_copy tracks a copy. INVALID_NULL_HANDLE once closed,
    // INVALID_ARGUMENT for a request of another engine or one that already has its command;
    // else the queue's result (INVALID_ARGUMENT for an unset argument, ...).
    ze_result_t append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, Request* request,
                              const hal::EventRef& signal, KeepAlive keep = {});
    // As append_launch, the group counts read from `groups` when the launch runs
    // (hal::Queue::append_launch_indirect of one kernel).
    ze_result_t append_launch_indirect(const hal::KernelRef& kernel, const hal::GroupCount* groups, Request* request,
                                       const hal::EventRef& signal, KeepAlive keep = {});
    // Waits until every command appended before it completed, then marks their requests
    // done (their keep-alives dropped before the return). Commands of one engine complete
    // in submission order (its queue is in order), so when the newest command has a
    // request, waiting for that request is enough: no barrier command is appended. A
    // barrier command is appended when the newest command has no request or its request
    // was cancelled (a cancelled command says nothing about those before it).
    ze_result_t barrier();
    // Marks done the requests whose copies completed and drops them (oldest first, up to the
    // first pending).
    void poll();
    // Drops a request from the tracked list at once (one cancel() took back).
    void untrack(Request* request);
    // Keeps `request`'s flags word current without calls (see the class comment). A request
    // already done, or not submitted, needs nothing.
    void watch(Request& request);
    // Refuses later appends, waits for everything, marks every request done. Any number of
    // threads may close at once; each returns once everything submitted completed.
    ze_result_t close();
    bool closed() const;
    // Number of requests whose copies have not completed (a poll first).
    size_t pending();

    const hal::DeviceRef& device() const noexcept { return device_; }
    hal::Queue& queue() const noexcept { return *queue_; }
    EventCache& events() noexcept { return events_; }

private:
    // What append_copy and append_launch share: `command(signal)` appends the command with
    // `signal` as its signal event; without a request it signals `signal`, else it is
    // tracked for `request` (append_request), which takes `keep` once it is appended.
    template <typename Command>
    ze_result_t append_command(Request* request, const hal::EventRef& signal, KeepAlive& keep, Command&& command);
    // Appends the command of `request`: it signals the engine's event, or the caller's
    // signal followed by a barrier that signals the engine's event (mutex_ held).
    template <typename Command>
    ze_result_t append_request(Request& request, Command&& command);
    // Makes the spare request if there is none and the engine is open (nothing on failure:
    // the next copy makes its own).
    void prepare_spare();
    // barrier(); `closing`: close() waits after refusing new copies, and drops every request.
    ze_result_t barrier_impl(bool closing);
    // Waits for `newest` (the request of the newest command): its result, or UNKNOWN when it
    // was cancelled meanwhile (the barrier command is then needed).
    static ze_result_t wait_newest(Request& newest);
    // Appends a barrier command and waits for it (or for the whole queue when no event can
    // be had). Needs no lock: the queue orders it after every command appended before.
    ze_result_t barrier_command();
    // What was taken out of the list and off the requests under mutex_ (the list's
    // references to unlinked requests, the keep-alives of requests seen done), dropped when
    // it goes, after the caller unlocked mutex_: the last reference runs the request's
    // destructor, a keep-alive's destructor is the front end's. Holds one of each without an
    // allocation, as the common poll sees one request done.
    class Released {
    public:
        void add(std::shared_ptr<Request> r);
        void add(KeepAlive k);

    private:
        KeepAlive first_keep_;
        std::vector<KeepAlive> more_keep_;
        std::shared_ptr<Request> first_;
        std::vector<std::shared_ptr<Request>> more_;
    };
    // Unlinks `r` (mutex_ held); the list's reference to it moves into *released.
    void unlink(Request* r, Released* released);
    // poll() with mutex_ held: a request already seen done is unlinked without asking its
    // event again.
    void poll_locked(Released* released);
    // The watcher thread: polls every kWatchPeriod while a watched request is tracked.
    void watch_loop();
    // Stops and joins the watcher.
    void stop_watcher();

    // How often the watcher polls: the delay before a completed watched request shows DONE.
    static constexpr std::chrono::microseconds kWatchPeriod{500};

    const hal::DeviceRef device_;
    const std::shared_ptr<hal::Queue> queue_;
    EventCache events_;

    mutable std::mutex mutex_;
    Request* head_ = nullptr;  // oldest tracked request, guarded by mutex_
    Request* tail_ = nullptr;  // guarded by mutex_
    size_t tracked_ = 0;       // guarded by mutex_
    uint64_t next_seq_ = 0;    // guarded by mutex_
    bool closed_ = false;      // guarded by mutex_
    // The request of the newest command while it is listed (null once unlinked: every
    // command was then seen complete, or the newest has no request).
    Request* newest_ = nullptr;  // guarded by mutex_
    // The newest command has no request, or its request was cancelled: a barrier needs a
    // barrier command.
    bool newest_untracked_ = false;  // guarded by mutex_
    // A request made ahead for the next copy without a signal (see copy_with_request), not
    // submitted; dropped by close(), which breaks its reference back to the engine.
    std::shared_ptr<Request> spare_;  // guarded by mutex_

    size_t watched_ = 0;         // tracked requests that are watched, guarded by mutex_
    bool watcher_idle_ = false;  // the watcher sleeps on watch_cv_, guarded by mutex_
    bool watcher_stop_ = false;  // guarded by mutex_
    std::condition_variable watch_cv_;
    std::thread watcher_;  // started by the first watch(), joined by close()
};

}  // namespace zehal::aml::detail
