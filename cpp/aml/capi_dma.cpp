// C API: generic aml_dma_* functions and zehal DMA engines (aml/dma/ze.h).
#include <cstdint>

#include "common/api_call_log.hpp"
#include "aml/capi_handles.hpp"
#include "hal/event_handle.hpp"
#include "aml/dma/ze.h"
#include "aml/layout/dense.h"

using zehal::aml::Dma;
using zehal::aml::Layout;
using zehal::aml::Request;
using zehal::aml::to_aml;
using zehal::aml::capi::dma_of;
using zehal::aml::capi::DmaHandle;
using zehal::aml::capi::guarded;
using zehal::aml::capi::layout_of;

namespace {

// The dense layout behind `layout`, or null when it is not a dense layout.
const Layout* dense(const aml_layout* layout) {
    if (!layout || layout->ops != &aml_layout_dense_ops || !layout->data) return nullptr;
    return layout_of(layout->data);
}

// The engine and request of an operator's argument block; false when it is not one.
bool unpack(void* arg, DmaHandle** h, Request** request) {
    auto* args = static_cast<aml_dma_ze_copy_args*>(arg);
    if (!args || !args->ze_data) return false;
    *h = reinterpret_cast<DmaHandle*>(args->ze_data);
    *request = Request::from_handle(args->ze_req);
    return true;
}

// Hands `r` to the C caller under `handle`, in a node an earlier request left when there is one.
void hold(DmaHandle* h, aml_dma_request* handle, std::shared_ptr<Request> r) {
    std::lock_guard lock(h->mutex);
    if (h->spare.empty()) {
        h->held.emplace(handle, std::move(r));
        return;
    }
    DmaHandle::Held::node_type node = std::move(h->spare.back());
    h->spare.pop_back();
    node.key() = handle;
    node.mapped() = std::move(r);
    h->held.insert(std::move(node));
}

// Takes the request of C handle `req` back from the C caller: null when the engine did not
// hand it out (or it was already waited for or cancelled). Its node is kept for the next one.
std::shared_ptr<Request> take(DmaHandle* h, aml_dma_request* req) {
    std::lock_guard lock(h->mutex);
    auto it = h->held.find(req);
    if (it == h->held.end()) return nullptr;
    DmaHandle::Held::node_type node = h->held.extract(it);
    std::shared_ptr<Request> r = std::move(node.mapped());
    // Within the capacity reserved at creation: no allocation, no exception.
    if (h->spare.size() < DmaHandle::kSpareNodes) h->spare.push_back(std::move(node));
    return r;
}

}  // namespace

extern "C" {

struct aml_dma_ops aml_dma_ze_ops = {
    aml_dma_ze_request_create, aml_dma_ze_request_destroy, aml_dma_ze_request_wait,
    aml_dma_ze_barrier,        aml_dma_ze_fprintf,
};

int aml_dma_ze_create(struct aml_dma** dma, zehal_device_t device, uint32_t ordinal, uint32_t index) {
    ZEHAL_TIMED_API_CALL();
    if (!dma || !device) return -AML_EINVAL;
    return guarded([&] {
        std::shared_ptr<Dma> impl;
        const ze_result_t r = Dma::create(zehal::aml::capi::device_ref(device), ordinal, index, &impl);
        if (r != ZE_RESULT_SUCCESS) return to_aml(r);
        auto* h = new DmaHandle();
        h->ops = &aml_dma_ze_ops;
        h->data = reinterpret_cast<aml_dma_data*>(h);
        h->impl = std::move(impl);
        *dma = h;
        return AML_SUCCESS;
    });
}

int aml_dma_ze_destroy(struct aml_dma** dma) {
    ZEHAL_TIMED_API_CALL();
    if (!dma) return -AML_EINVAL;
    if (!*dma) return AML_SUCCESS;
    auto* h = static_cast<DmaHandle*>(*dma);
    const ze_result_t r = h->impl->close();
    delete h;  // with the requests C callers still hold
    *dma = nullptr;
    return to_aml(r);
}

int aml_dma_ze_request_create(struct aml_dma_data* data, struct aml_dma_request** req, struct aml_layout* dst,
                              struct aml_layout* src, aml_dma_operator op, void* op_arg) {
    ZEHAL_TIMED_API_CALL();
    DmaHandle* h = dma_of(data);
    if (!h || !dst || !src) return -AML_EINVAL;
    if (!op) op = aml_dma_ze_copy_1D;
    return guarded([&] {
        std::shared_ptr<Request> r;
        if (req) {
            if (ze_result_t res = h->impl->new_request(&r); res != ZE_RESULT_SUCCESS) return to_aml(res);
        }
        aml_dma_ze_copy_args args{reinterpret_cast<aml_dma_ze_data*>(h), r ? r->handle() : nullptr, op_arg};
        const int rc = op(dst, src, &args);
        if (rc != AML_SUCCESS) return rc < 0 ? rc : -rc;
        if (!r) return AML_SUCCESS;
        // An operator that submitted nothing did its work in the call: the request is done.
        if (!r->submitted()) r->cancel();
        // C callers read the flags word itself: keep it current.
        h->impl->watch(*r);
        auto* handle = reinterpret_cast<aml_dma_request*>(r->handle());
        hold(h, handle, std::move(r));
        *req = handle;
        return AML_SUCCESS;
    });
}

int aml_dma_ze_copy_signal(struct aml_dma* dma, struct aml_dma_request** req, void* dst, const void* src, size_t size,
                           struct zehal_event* signal) {
    ZEHAL_TIMED_API_CALL();
    if (!dma || dma->ops != &aml_dma_ze_ops || !dst || !src || size == 0) return -AML_EINVAL;
    DmaHandle* h = dma_of(dma->data);
    return guarded([&] {
        zehal::hal::EventRef event;
        if (signal) {
            event = zehal::capi::event_from_handle(signal);
            if (!event) return -AML_EINVAL;
        }
        std::shared_ptr<Request> r;
        if (ze_result_t res = h->impl->copy(dst, src, size, req ? &r : nullptr, event); res != ZE_RESULT_SUCCESS)
            return to_aml(res);
        if (!req) return AML_SUCCESS;
        h->impl->watch(*r);
        auto* handle = reinterpret_cast<aml_dma_request*>(r->handle());
        hold(h, handle, std::move(r));
        *req = handle;
        return AML_SUCCESS;
    });
}

int aml_dma_ze_request_wait(struct aml_dma_data* data, struct aml_dma_request** req) {
    ZEHAL_TIMED_API_CALL();
    DmaHandle* h = dma_of(data);
    if (!h || !req || !*req) return -AML_EINVAL;
    std::shared_ptr<Request> r = take(h, *req);
    if (!r) return -AML_EINVAL;
    const ze_result_t res = r->wait();
    *req = nullptr;
    return to_aml(res);
}

int aml_dma_ze_request_destroy(struct aml_dma_data* data, struct aml_dma_request** req) {
    ZEHAL_TIMED_API_CALL();
    DmaHandle* h = dma_of(data);
    if (!h || !req || !*req) return -AML_EINVAL;
    std::shared_ptr<Request> r = take(h, *req);
    if (!r) return -AML_EINVAL;
    const ze_result_t res = r->cancel();
    *req = nullptr;
    return to_aml(res);
}

int aml_dma_ze_barrier(struct aml_dma_data* data) {
    ZEHAL_TIMED_API_CALL();
    DmaHandle* h = dma_of(data);
    if (!h) return -AML_EINVAL;
    return guarded([&] { return to_aml(h->impl->barrier()); });
}

int aml_dma_ze_fprintf(const struct aml_dma_data* data, FILE* stream, const char* prefix) {
    ZEHAL_TIMED_API_CALL();
    DmaHandle* h = dma_of(data);
    if (!h || !stream) return -AML_EINVAL;
    h->impl->describe(stream, prefix);
    return AML_SUCCESS;
}

int aml_dma_ze_copy_1D(struct aml_layout* dst, const struct aml_layout* src, void* arg) {
    ZEHAL_TIMED_API_CALL();
    DmaHandle* h = nullptr;
    Request* request = nullptr;
    if (!dst || !src || !unpack(arg, &h, &request)) return -AML_EINVAL;
    const Layout* d = dense(dst);
    const Layout* s = dense(src);
    if (!d || !s) return -AML_EINVAL;
    size_t bytes = 0;
    if (ze_result_t r = zehal::aml::copy_1d_size(*d, *s, &bytes); r != ZE_RESULT_SUCCESS) return to_aml(r);
    return guarded([&] { return to_aml(h->impl->append_copy(d->rawptr(), s->rawptr(), bytes, request)); });
}

int aml_dma_ze_memcpy_op(struct aml_layout* dst, const struct aml_layout* src, void* arg) {
    ZEHAL_TIMED_API_CALL();
    DmaHandle* h = nullptr;
    Request* request = nullptr;
    if (!dst || !src || !unpack(arg, &h, &request)) return -AML_EINVAL;
    const auto size = reinterpret_cast<uintptr_t>(static_cast<aml_dma_ze_copy_args*>(arg)->arg);
    return guarded([&] { return to_aml(h->impl->append_copy(dst, src, size, request)); });
}

int aml_dma_copy_custom(struct aml_dma* dma, struct aml_layout* dst, struct aml_layout* src, aml_dma_operator op,
                        void* op_arg) {
    ZEHAL_TIMED_API_CALL();
    if (!dma || !dma->ops || !dma->ops->create_request || !dma->ops->wait_request || !dst || !src) return -AML_EINVAL;
    aml_dma_request* req = nullptr;
    if (int r = dma->ops->create_request(dma->data, &req, dst, src, op, op_arg); r != AML_SUCCESS) return r;
    return dma->ops->wait_request(dma->data, &req);
}

int aml_dma_async_copy_custom(struct aml_dma* dma, struct aml_dma_request** req, struct aml_layout* dst,
                              struct aml_layout* src, aml_dma_operator op, void* op_arg) {
    ZEHAL_TIMED_API_CALL();
    if (!dma || !dma->ops || !dma->ops->create_request || !dst || !src) return -AML_EINVAL;
    return dma->ops->create_request(dma->data, req, dst, src, op, op_arg);
}

int aml_dma_wait(struct aml_dma* dma, struct aml_dma_request** req) {
    ZEHAL_TIMED_API_CALL();
    if (!dma || !dma->ops || !dma->ops->wait_request || !req || !*req) return -AML_EINVAL;
    return dma->ops->wait_request(dma->data, req);
}

int aml_dma_cancel(struct aml_dma* dma, struct aml_dma_request** req) {
    ZEHAL_TIMED_API_CALL();
    if (!dma || !dma->ops || !dma->ops->destroy_request || !req || !*req) return -AML_EINVAL;
    return dma->ops->destroy_request(dma->data, req);
}

int aml_dma_barrier(struct aml_dma* dma) {
    ZEHAL_TIMED_API_CALL();
    if (!dma || !dma->ops) return -AML_EINVAL;
    if (!dma->ops->barrier) return -AML_ENOTSUP;
    return dma->ops->barrier(dma->data);
}

int aml_dma_fprintf(FILE* stream, const char* prefix, const struct aml_dma* dma) {
    ZEHAL_TIMED_API_CALL();
    if (!stream || !dma) return -AML_EINVAL;
    const char* p = prefix ? prefix : "";
    if (!dma->ops || !dma->ops->fprintf || !dma->data) {
        std::fprintf(stream, "%sdma: %p\n", p, static_cast<const void*>(dma));
        return AML_SUCCESS;
    }
    return dma->ops->fprintf(dma->data, stream, p);
}

}  // extern "C"
