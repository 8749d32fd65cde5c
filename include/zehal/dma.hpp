// zehal's public C++ API: DMA engines and their requests.
#pragma once

#include <aml.h>
#include <aml/dma/ze.h>
#include <zehal/area.hpp>
#include <zehal/device.hpp>
#include <zehal/error.hpp>
#include <zehal/events.hpp>

#include <cstddef>
#include <memory>
#include <utility>

namespace zehal {

class Dma;

// A submitted copy: wait() for it, or cancel() it. Move-only; one that goes unwaited is
// cancelled (a copy already running is waited for). After wait() or cancel() (or a move)
// it is done and holds nothing.
class Request {
public:
    Request(Request&& other) noexcept : dma_(std::move(other.dma_)), req_(std::exchange(other.req_, nullptr)) {}
    Request& operator=(Request&& other) noexcept {
        if (this != &other) {
            release();
            dma_ = std::move(other.dma_);
            req_ = std::exchange(other.req_, nullptr);
        }
        return *this;
    }
    ~Request() { release(); }
    // True once the copy completed (or was cancelled). Reads the request's flags word, which
    // the engine keeps current (acquire: the copy's writes are visible once it reads DONE).
    bool done() const noexcept {
        return !req_ || __atomic_load_n(&reinterpret_cast<aml_dma_ze_request*>(req_)->flags, __ATOMIC_ACQUIRE) ==
                            AML_DMA_ZE_REQUEST_FLAGS_DONE;
    }
    // Waits for the copy; throws Error when it failed. Once.
    void wait() {
        if (!req_) return;
        detail::check_aml(aml_dma_wait(dma_.get(), &req_), "zehal::Request::wait");
    }
    // Removes the copy when it has not started, else waits for it.
    void cancel() {
        if (req_) detail::check_aml(aml_dma_cancel(dma_.get(), &req_), "zehal::Request::cancel");
    }

private:
    friend class Dma;
    Request(std::shared_ptr<aml_dma> dma, aml_dma_request* req) : dma_(std::move(dma)), req_(req) {}

    // Cancels the copy unless waited for, then lets go of the engine.
    void release() noexcept {
        if (req_) aml_dma_cancel(dma_.get(), &req_);
        req_ = nullptr;
        dma_.reset();
    }
    std::shared_ptr<aml_dma> dma_;
    aml_dma_request* req_;
};

// An asynchronous copy engine of one device: engine `index` of group `ordinal` (1: copy
// engines, 0: compute engines). Copyable: copies share the engine, which waits for every
// copy when its last copy goes. Thread-safe.
class Dma {
public:
    explicit Dma(const Device& device, uint32_t ordinal = 1, uint32_t index = 0) {
        aml_dma* d = nullptr;
        detail::check_aml(aml_dma_ze_create(&d, device.handle(), ordinal, index), "zehal::Dma");
        dma_.reset(d, [](aml_dma* p) { aml_dma_ze_destroy(&p); });
    }
    // Copies `bytes` from `src` to `dst` and returns at once; `signal`, when given, is
    // signalled by the copy itself (its kernel timestamps then measure the copy; a
    // moved-from Event throws INVALID_NULL_HANDLE).
    Request copy(void* dst, const void* src, size_t bytes, const Event* signal = nullptr) {
        if (signal && !signal->handle()) throw Error(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, "zehal::Dma::copy: signal");
        aml_dma_request* req = nullptr;
        detail::check_aml(
            aml_dma_ze_copy_signal(dma_.get(), &req, dst, src, bytes, signal ? signal->handle() : nullptr),
            "zehal::Dma::copy");
        return Request(dma_, req);
    }
    // The whole of `src` into `dst` (which must be at least as large).
    Request copy(Buffer& dst, const Buffer& src, const Event* signal = nullptr) {
        if (dst.size() < src.size())
            throw Error(ZE_RESULT_ERROR_INVALID_SIZE, "zehal::Dma::copy: dst is smaller than src");
        return copy(dst.data(), src.data(), src.size(), signal);
    }
    // Fire-and-forget: only barrier() waits for it.
    void copy_detached(void* dst, const void* src, size_t bytes) {
        detail::check_aml(aml_dma_ze_copy_signal(dma_.get(), nullptr, dst, src, bytes, nullptr),
                          "zehal::Dma::copy_detached");
    }
    // Returns once every copy submitted before it completed.
    void barrier() { detail::check_aml(aml_dma_barrier(dma_.get()), "zehal::Dma::barrier"); }
    // The C engine, for the AML C API.
    aml_dma* handle() const noexcept { return dma_.get(); }

private:
    std::shared_ptr<aml_dma> dma_;
};

}  // namespace zehal
