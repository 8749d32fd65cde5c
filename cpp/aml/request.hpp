// DMA requests (contract §2.4): one submitted copy, pending until its event is signalled.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "zehal/ze_result.h"
#include "aml/dma/ze.h"
#include "common/clock.hpp"
#include "hal/event.hpp"

namespace zehal::aml {

namespace detail {
class Engine;
}

// A copy submitted to a Dma engine. Its flags go from AML_DMA_ZE_REQUEST_FLAGS_PENDING to
// AML_DMA_ZE_REQUEST_FLAGS_DONE once the copy completed on the engine (or was cancelled);
// the flags word of the C handle is the same storage. Every method is thread-safe; several
// threads may wait. Completion is read from an event of the engine's own (recycled when the
// request is destroyed), never from the caller's signal event: someone else may signal or
// reset that one, and a request must not count as done before its copy is.
//
// A request may carry a keep-alive (what its copy's operands need to stay valid: a
// front end's references to them), given at submission. Whoever first sees the copy done
// (its engine's poll, barrier or close, its watcher, or the request's own wait(), flags()
// or cancel()) takes it and drops it, outside any lock; so it lives exactly until the
// copy is seen done, and its destructor may run on any thread.
class Request : public std::enable_shared_from_this<Request> {
public:
    // What a request keeps alive until its copy is seen done (see the class comment).
    using KeepAlive = std::shared_ptr<void>;

private:
    struct Key {
        explicit Key() = default;
    };

public:
    // Made by the engine only (Key is private): see Dma::new_request() and Dma::copy().
    // `event`: the engine's event that marks completion; `signal`: the caller's event the copy
    // signals as well (null for none).
    Request(Key, std::shared_ptr<detail::Engine> engine, hal::EventRef event, hal::EventRef signal);
    ~Request();
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;

    // AML_DMA_ZE_REQUEST_FLAGS_PENDING or _DONE, queried from the event while pending.
    int flags() const;
    bool done() const { return flags() == AML_DMA_ZE_REQUEST_FLAGS_DONE; }
    // Waits until done or `timeout_ns` passed; idempotent. Returns the copy's result
    // (SUCCESS, DEVICE_LOST, ...), NOT_READY on timeout, INVALID_ARGUMENT when no copy was
    // ever appended for it.
    ze_result_t wait(uint64_t timeout_ns = kWaitForever);
    // Removes the copy from its queue when it has not started (SUCCESS; the request is then
    // done and cancelled), else waits for it and returns its result. Does nothing when done.
    ze_result_t cancel();
    // The copy's result once done; NOT_READY before.
    ze_result_t result() const;
    // True when cancel() removed the copy before it ran.
    bool cancelled() const noexcept { return cancelled_.load(std::memory_order_acquire); }
    // True once its copy was appended to the queue.
    bool submitted() const noexcept { return submitted_.load(std::memory_order_acquire); }
    // The engine's event that marks the copy's completion.
    const hal::EventRef& event() const noexcept { return event_; }
    // The caller's event the copy signals (null when none was given).
    const hal::EventRef& signal() const noexcept { return signal_; }

    // The C handle of this request (what aml_dma_async_copy_custom hands out).
    aml_dma_ze_request* handle() noexcept { return &handle_; }
    // The request of a C handle made by handle().
    static Request* from_handle(aml_dma_ze_request* handle) noexcept;

private:
    friend class detail::Engine;
    friend class Dma;
    // The C handle: the public flags word plus the way back to its request.
    struct Handle : aml_dma_ze_request {
        Request* owner;
    };
    static constexpr uint32_t kPending = ~0u;

    // Records the result (the first call wins) and sets the flags to DONE. Returns the
    // keep-alive to the first call (null to the others): the caller drops it after
    // releasing any lock it holds, as its destructor may call back into the engine.
    [[nodiscard]] KeepAlive complete(ze_result_t r) noexcept;

    Handle handle_{};
    const std::shared_ptr<detail::Engine> engine_;
    const hal::EventRef event_;
    const hal::EventRef signal_;
    std::atomic<uint32_t> result_{kPending};
    std::atomic<bool> cancelled_{false};
    std::atomic<bool> submitted_{false};

    // Links of the engine's list of tracked requests, guarded by the engine's mutex.
    Request* prev_ = nullptr;
    Request* next_ = nullptr;
    uint64_t seq_ = 0;
    bool watched_ = false;                   // see Engine::watch
    std::shared_ptr<Request> tracked_self_;  // keeps a listed request alive (pending, or seen done until unlinked)
    // Set by the engine before it publishes submitted_ (release), taken by complete()'s
    // first caller (after its acq_rel exchange of result_): never two owners at once.
    KeepAlive keep_alive_;
};

}  // namespace zehal::aml
