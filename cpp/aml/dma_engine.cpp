#include "aml/dma_engine.hpp"

#include <new>
#include <vector>

#include "aml/request.hpp"
#include "common/clock.hpp"

namespace zehal::aml::detail {

Engine::Engine(hal::DeviceRef device, std::shared_ptr<hal::Queue> queue)
    : device_(std::move(device)),
      queue_(std::move(queue)),
      events_(device_) {}

ze_result_t Engine::new_request(const hal::EventRef& signal, std::shared_ptr<Request>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (closed()) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    hal::EventRef event;
    if (ze_result_t r = events_.acquire(&event); r != ZE_RESULT_SUCCESS) return r;
    try {
        *out = std::make_shared<Request>(Request::Key{}, shared_from_this(), event, signal);
    } catch (...) {
        events_.release(std::move(event));
        throw;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t Engine::copy_with_request(void* dst, const void* src, size_t size, const hal::EventRef& signal,
                                      KeepAlive keep, std::shared_ptr<Request>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    std::shared_ptr<Request> request;
    if (!signal) {
        std::lock_guard lock(mutex_);
        request = std::move(spare_);
    }
    if (!request)
        if (ze_result_t r = new_request(signal, &request); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = append_copy(dst, src, size, request.get(), nullptr, std::move(keep)); r != ZE_RESULT_SUCCESS)
        return r;
    *out = std::move(request);
    if (!signal) prepare_spare();
    return ZE_RESULT_SUCCESS;
}

void Engine::prepare_spare() {
    {
        std::lock_guard lock(mutex_);
        if (spare_ || closed_) return;
    }
    std::shared_ptr<Request> next;
    try {
        if (new_request(nullptr, &next) != ZE_RESULT_SUCCESS) return;
    } catch (const std::bad_alloc&) {
        return;
    }
    std::lock_guard lock(mutex_);
    // Another thread's spare, or a close, since: `next` is dropped after the lock.
    if (!spare_ && !closed_) spare_ = std::move(next);
}

template <typename Command>
ze_result_t Engine::append_command(Request* request, const hal::EventRef& signal, KeepAlive& keep, Command&& command) {
    Released released;  // dropped after the lock
    std::lock_guard lock(mutex_);
    if (closed_) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!request) {
        if (keep) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // nothing would say when to drop it
        const ze_result_t r = command(signal);
        if (r == ZE_RESULT_SUCCESS) {
            newest_ = nullptr;
            newest_untracked_ = true;
        }
        poll_locked(&released);
        return r;
    }
    if (request->engine_.get() != this || request->submitted_.load(std::memory_order_relaxed) ||
        request->result_.load(std::memory_order_relaxed) != Request::kPending)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (ze_result_t r = append_request(*request, command); r != ZE_RESULT_SUCCESS) return r;
    request->keep_alive_ = std::move(keep);
    // release: a thread that sees submitted (flags(), wait()) may wait on the event and
    // complete the request, taking its keep-alive; the list is guarded by mutex_.
    request->submitted_.store(true, std::memory_order_release);
    newest_ = request;
    newest_untracked_ = false;
    request->seq_ = next_seq_++;
    request->tracked_self_ = request->shared_from_this();
    request->prev_ = tail_;
    request->next_ = nullptr;
    (tail_ ? tail_->next_ : head_) = request;
    tail_ = request;
    ++tracked_;
    // Older requests done are dropped here, after the submission (their teardown overlaps
    // this copy); a request alone on the list was just submitted, and asking its event would
    // cost a driver call that rarely says done.
    if (head_ != request) poll_locked(&released);
    return ZE_RESULT_SUCCESS;
}

ze_result_t Engine::append_copy(void* dst, const void* src, size_t size, Request* request, const hal::EventRef& signal,
                                KeepAlive keep) {
    // The queue checks the copy's arguments (hal/queue_checks.hpp).
    return append_command(request, signal, keep,
                          [&](const hal::EventRef& s) { return queue_->append_copy(dst, src, size, s, {}); });
}

ze_result_t Engine::append_launch(hal::Kernel& kernel, const hal::GroupCount& groups, Request* request,
                                  const hal::EventRef& signal, KeepAlive keep) {
    return append_command(request, signal, keep,
                          [&](const hal::EventRef& s) { return queue_->append_launch(kernel, groups, s, {}); });
}

ze_result_t Engine::append_launch_indirect(const hal::KernelRef& kernel, const hal::GroupCount* groups,
                                           Request* request, const hal::EventRef& signal, KeepAlive keep) {
    return append_command(request, signal, keep, [&](const hal::EventRef& s) {
        return queue_->append_launch_indirect({&kernel, 1}, groups, nullptr, s, {});
    });
}

template <typename Command>
ze_result_t Engine::append_request(Request& request, Command&& command) {
    if (!request.signal_) return command(request.event_);
    // The command signals the caller's event (so its kernel timestamps are the command's); a
    // barrier behind it on this in-order queue signals the engine's event, which alone says
    // when the request is done.
    if (ze_result_t r = command(request.signal_); r != ZE_RESULT_SUCCESS) return r;
    if (queue_->append_barrier(request.event_, {}) == ZE_RESULT_SUCCESS) return ZE_RESULT_SUCCESS;
    // The command is queued but its completion cannot be marked by the queue: wait for it
    // here and mark it from the host, so the request never waits on a command nobody observes.
    if (ze_result_t r = queue_->host_synchronize(kWaitForever); r != ZE_RESULT_SUCCESS) return r;
    return request.event_->host_signal();
}

void Engine::Released::add(std::shared_ptr<Request> r) {
    if (!first_)
        first_ = std::move(r);
    else
        more_.push_back(std::move(r));
}

void Engine::Released::add(KeepAlive k) {
    if (!k) return;
    if (!first_keep_)
        first_keep_ = std::move(k);
    else
        more_keep_.push_back(std::move(k));
}

void Engine::unlink(Request* r, Released* released) {
    if (!r->tracked_self_) return;  // not tracked (already unlinked)
    (r->prev_ ? r->prev_->next_ : head_) = r->next_;
    (r->next_ ? r->next_->prev_ : tail_) = r->prev_;
    r->prev_ = r->next_ = nullptr;
    --tracked_;
    if (r->watched_) --watched_;
    if (r == newest_) {
        // Unlinked in order (poll, close), every command was seen complete; a cancelled
        // newest (untrack) says nothing about the commands before it.
        newest_ = nullptr;
        newest_untracked_ = r->cancelled();
    }
    released->add(std::move(r->tracked_self_));
}

void Engine::watch(Request& request) {
    std::lock_guard lock(mutex_);
    if (!request.tracked_self_ || request.watched_ || watcher_stop_ ||
        request.result_.load(std::memory_order_relaxed) != Request::kPending)
        return;
    request.watched_ = true;
    ++watched_;
    if (!watcher_.joinable())
        watcher_ = std::thread(&Engine::watch_loop, this);
    else if (watcher_idle_)
        watch_cv_.notify_one();
}

void Engine::watch_loop() {
    std::unique_lock lock(mutex_);
    while (!watcher_stop_) {
        if (watched_ == 0) {
            watcher_idle_ = true;
            watch_cv_.wait(lock);
            watcher_idle_ = false;
            continue;
        }
        // Polling on a period, rather than waiting on each event, keeps the watcher from
        // waking together with the thread that waits for the same copy.
        watch_cv_.wait_for(lock, kWatchPeriod);
        if (watcher_stop_) break;
        lock.unlock();
        poll();
        lock.lock();
    }
}

void Engine::stop_watcher() {
    std::thread watcher;  // taken under the lock: one closer joins it, the others find none
    {
        std::lock_guard lock(mutex_);
        watcher_stop_ = true;
        watcher = std::move(watcher_);
    }
    watch_cv_.notify_one();
    if (watcher.joinable()) watcher.join();
}

void Engine::untrack(Request* request) {
    Released released;  // dropped after the lock: it may be the last reference
    std::lock_guard lock(mutex_);
    unlink(request, &released);
}

void Engine::poll() {
    Released released;  // dropped after the lock
    std::lock_guard lock(mutex_);
    poll_locked(&released);
}

void Engine::poll_locked(Released* released) {
    while (head_) {
        Request* r = head_;
        // relaxed: only whether it is done is read (a stale kPending asks the event, and
        // complete() keeps the first result); the result is read with acquire by its readers.
        if (r->result_.load(std::memory_order_relaxed) == Request::kPending) {
            const ze_result_t q = r->event_->query();
            if (q == ZE_RESULT_NOT_READY) break;
            released->add(r->complete(q));
        }
        unlink(r, released);
    }
}

ze_result_t Engine::barrier() { return barrier_impl(false); }

ze_result_t Engine::barrier_impl(bool closing) {
    std::shared_ptr<Request> newest;  // held while waited for without the lock
    uint64_t limit = 0;
    bool need_command = false;
    {
        std::lock_guard lock(mutex_);
        if (closed_ && !closing) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        limit = next_seq_;
        if (newest_untracked_)
            need_command = true;
        else if (newest_)
            newest = newest_->shared_from_this();
        // else: nothing was submitted, or every command was seen complete.
    }
    ze_result_t r = newest ? wait_newest(*newest) : ZE_RESULT_SUCCESS;
    if (need_command || r == ZE_RESULT_ERROR_UNKNOWN)
        r = barrier_command();
    else if (r == ZE_RESULT_SUCCESS && device_->lost())
        r = ZE_RESULT_ERROR_DEVICE_LOST;  // as a barrier command would answer
    if (r != ZE_RESULT_SUCCESS && r != ZE_RESULT_ERROR_DEVICE_LOST) return r;

    // Every command appended before the barrier completed (or the device is lost): their
    // requests are done with the barrier's result. They stay listed, unless closing, so
    // that their teardown comes after the next submission (see the class comment).
    Released released;  // dropped after the lock
    released.add(std::move(newest));
    std::lock_guard lock(mutex_);
    for (Request* q = head_; q && q->seq_ < limit;) {
        Request* next = q->next_;
        released.add(q->complete(r));
        if (closing) unlink(q, &released);
        q = next;
    }
    return r;
}

ze_result_t Engine::wait_newest(Request& newest) {
    if (newest.cancelled()) return ZE_RESULT_ERROR_UNKNOWN;
    const ze_result_t r = newest.wait(kWaitForever);
    return newest.cancelled() ? ZE_RESULT_ERROR_UNKNOWN : r;
}

ze_result_t Engine::barrier_command() {
    hal::EventRef event;
    if (events_.acquire(&event) != ZE_RESULT_SUCCESS) {
        // No event to be had (a pool could not be created): wait for the whole queue.
        return queue_->host_synchronize(kWaitForever);
    }
    ze_result_t r = queue_->append_barrier(event, {});
    if (r == ZE_RESULT_SUCCESS) {
        r = event->host_synchronize(kWaitForever);
        if (r != ZE_RESULT_SUCCESS) return r;  // the event may still be signalled: not reused
    }
    events_.release(std::move(event));
    return r;
}

ze_result_t Engine::close() {
    std::shared_ptr<Request> spare;  // dropped after the lock: it returns its event to the cache
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        spare = std::move(spare_);
    }
    // Every closer waits for everything submitted, so that none returns (and lets the
    // caller drop the operands) while another closer still waits.
    const ze_result_t r = barrier_impl(true);
    stop_watcher();
    return r;
}

bool Engine::closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
}

size_t Engine::pending() {
    Released released;  // dropped after the lock
    std::lock_guard lock(mutex_);
    poll_locked(&released);
    return tracked_;
}

}  // namespace zehal::aml::detail
