#include "aml/request.hpp"

#include <cstddef>

#include "aml/dma_engine.hpp"

namespace zehal::aml {

Request::Request(Key, std::shared_ptr<detail::Engine> engine, hal::EventRef event, hal::EventRef signal)
    : engine_(std::move(engine)),
      event_(std::move(event)),
      signal_(std::move(signal)) {
    handle_.flags = AML_DMA_ZE_REQUEST_FLAGS_PENDING;
    handle_.owner = this;
}

Request::~Request() {
    // The event goes back to the cache unless a command may still signal it: a pending
    // request is kept alive by its engine, so here it is done or never submitted.
    if (result_.load(std::memory_order_acquire) != kPending || !submitted_.load(std::memory_order_acquire))
        engine_->events().release(event_);
}

Request* Request::from_handle(aml_dma_ze_request* handle) noexcept {
    return handle ? static_cast<Handle*>(handle)->owner : nullptr;
}

Request::KeepAlive Request::complete(ze_result_t r) noexcept {
    uint32_t expected = kPending;
    // acq_rel: the winner publishes the result; a loser reads the winner's.
    const bool first = result_.compare_exchange_strong(expected, static_cast<uint32_t>(r), std::memory_order_acq_rel);
    // release: a reader that sees DONE in the C flags word (atomic load) also sees the
    // result and everything the copy wrote before its event was signalled.
    std::atomic_ref<int>(handle_.flags).store(AML_DMA_ZE_REQUEST_FLAGS_DONE, std::memory_order_release);
    // Only the first caller touches keep_alive_: the engine wrote it before submitted_,
    // which every caller read (acquire) or held the engine's mutex for.
    return first ? std::move(keep_alive_) : KeepAlive{};
}

ze_result_t Request::result() const {
    // acquire: pairs with the release of complete().
    const uint32_t r = result_.load(std::memory_order_acquire);
    return r == kPending ? ZE_RESULT_NOT_READY : static_cast<ze_result_t>(r);
}

int Request::flags() const {
    if (result_.load(std::memory_order_acquire) != kPending) return AML_DMA_ZE_REQUEST_FLAGS_DONE;
    if (!submitted_.load(std::memory_order_acquire)) return AML_DMA_ZE_REQUEST_FLAGS_PENDING;
    const ze_result_t r = event_->query();
    if (r == ZE_RESULT_NOT_READY) return AML_DMA_ZE_REQUEST_FLAGS_PENDING;
    // The completion is recorded by whoever observes it; flags() is logically const.
    // It stays on the engine's list until the engine drops it (see Engine).
    const KeepAlive released = const_cast<Request*>(this)->complete(r);
    return AML_DMA_ZE_REQUEST_FLAGS_DONE;
}

ze_result_t Request::wait(uint64_t timeout_ns) {
    if (result_.load(std::memory_order_acquire) == kPending) {
        if (!submitted_.load(std::memory_order_acquire)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        const ze_result_t r = event_->host_synchronize(timeout_ns);
        if (r == ZE_RESULT_NOT_READY) return r;
        // It stays on the engine's list until the engine drops it, after its next submission
        // (see Engine): nothing but the result and the keep-alive (dropped here, with no lock
        // held) between this completion and the caller's next copy.
        const KeepAlive released = complete(r);
    }
    return result();
}

ze_result_t Request::cancel() {
    if (result_.load(std::memory_order_acquire) != kPending) return ZE_RESULT_SUCCESS;
    if (!submitted_.load(std::memory_order_acquire)) {
        cancelled_.store(true, std::memory_order_relaxed);  // published by complete()'s release
        const KeepAlive released = complete(ZE_RESULT_SUCCESS);
        return ZE_RESULT_SUCCESS;
    }
    if (engine_->queue().cancel(event_) == ZE_RESULT_SUCCESS) {
        cancelled_.store(true, std::memory_order_relaxed);  // published by complete()'s release
        const KeepAlive released = complete(ZE_RESULT_SUCCESS);
        engine_->untrack(this);
        return ZE_RESULT_SUCCESS;
    }
    // Started, finished, or a backend that cannot take commands back: wait for it.
    return wait(kWaitForever);
}

}  // namespace zehal::aml
