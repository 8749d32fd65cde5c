#include "aml/dma.hpp"

#include <string>

#include "aml/dma_engine.hpp"
#include "hal/types.hpp"

namespace zehal::aml {

ze_result_t Dma::create(const hal::DeviceRef& device, uint32_t ordinal, uint32_t index, std::shared_ptr<Dma>* out) {
    if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!device) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    const hal::DeviceProperties& props = device->properties();
    const uint32_t engines = ordinal == hal::kComputeOrdinal ? props.compute_engines
                             : ordinal == hal::kCopyOrdinal  ? props.copy_engines
                                                             : 0;
    if (index >= engines) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::shared_ptr<hal::Queue> queue;
    if (ze_result_t r = device->create_queue(ordinal, index, &queue); r != ZE_RESULT_SUCCESS) return r;
    out->reset(new Dma(std::make_shared<detail::Engine>(device, std::move(queue)), ordinal, index));
    return ZE_RESULT_SUCCESS;
}

Dma::Dma(std::shared_ptr<detail::Engine> engine, uint32_t ordinal, uint32_t index)
    : engine_(std::move(engine)),
      ordinal_(ordinal),
      index_(index) {}

Dma::~Dma() { engine_->close(); }

ze_result_t Dma::copy(void* dst, const void* src, size_t size, std::shared_ptr<Request>* request,
                      const hal::EventRef& signal, Request::KeepAlive keep) {
    if (!request && !keep) return engine_->append_copy(dst, src, size, nullptr, signal);
    // A keep-alive needs a request to say when it may go: the engine lists it until then.
    std::shared_ptr<Request> made;
    const ze_result_t r = engine_->copy_with_request(dst, src, size, signal, std::move(keep), &made);
    if (r == ZE_RESULT_SUCCESS && request) *request = std::move(made);
    return r;
}

ze_result_t copy_1d_size(const Layout& dst, const Layout& src, size_t* bytes) {
    if (dst.ndims() != 1 || src.ndims() != 1 || !dst.contiguous() || !src.contiguous())
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    // One contiguous dimension: element_size x dims is the layout's extent, no overflow.
    const size_t n = src.extent_bytes();
    if (dst.extent_bytes() < n) return ZE_RESULT_ERROR_INVALID_SIZE;
    *bytes = n;
    return ZE_RESULT_SUCCESS;
}

ze_result_t Dma::copy(const Layout& dst, const Layout& src, std::shared_ptr<Request>* request,
                      const hal::EventRef& signal, Request::KeepAlive keep) {
    size_t bytes = 0;
    if (ze_result_t r = copy_1d_size(dst, src, &bytes); r != ZE_RESULT_SUCCESS) return r;
    return copy(dst.rawptr(), src.rawptr(), bytes, request, signal, std::move(keep));
}

ze_result_t Dma::new_request(std::shared_ptr<Request>* out, const hal::EventRef& signal) {
    return engine_->new_request(signal, out);
}

ze_result_t Dma::append_copy(void* dst, const void* src, size_t size, Request* request) {
    return engine_->append_copy(dst, src, size, request, nullptr);
}

namespace {

// A launch through `append(request, signal, keep)` (the engine's append_launch or
// append_launch_indirect): untracked without a request or keep-alive, else tracked by a
// request made first (with a keep-alive, made even for fire-and-forget: see copy()).
template <typename Append>
ze_result_t launch_tracked(detail::Engine& engine, std::shared_ptr<Request>* request, const hal::EventRef& signal,
                           Request::KeepAlive keep, Append&& append) {
    if (!request && !keep) return append(nullptr, signal, Request::KeepAlive{});
    std::shared_ptr<Request> made;
    if (ze_result_t r = engine.new_request(signal, &made); r != ZE_RESULT_SUCCESS) return r;
    if (ze_result_t r = append(made.get(), nullptr, std::move(keep)); r != ZE_RESULT_SUCCESS) return r;
    if (request) *request = std::move(made);
    return ZE_RESULT_SUCCESS;
}

}  // namespace

ze_result_t Dma::launch(hal::Kernel& kernel, const hal::GroupCount& groups, std::shared_ptr<Request>* request,
                        const hal::EventRef& signal, Request::KeepAlive keep) {
    return launch_tracked(*engine_, request, signal, std::move(keep),
                          [&](Request* r, const hal::EventRef& s, Request::KeepAlive k) {
                              return engine_->append_launch(kernel, groups, r, s, std::move(k));
                          });
}

ze_result_t Dma::launch_indirect(const hal::KernelRef& kernel, const hal::GroupCount* groups,
                                 std::shared_ptr<Request>* request, const hal::EventRef& signal,
                                 Request::KeepAlive keep) {
    return launch_tracked(*engine_, request, signal, std::move(keep),
                          [&](Request* r, const hal::EventRef& s, Request::KeepAlive k) {
                              return engine_->append_launch_indirect(kernel, groups, r, s, std::move(k));
                          });
}

ze_result_t Dma::barrier() { return engine_->barrier(); }

void Dma::poll() { engine_->poll(); }

void Dma::watch(Request& request) { engine_->watch(request); }

ze_result_t Dma::close() { return engine_->close(); }

bool Dma::closed() const { return engine_->closed(); }

bool Dma::owns(const Request& request) const noexcept { return request.engine_ == engine_; }

size_t Dma::pending() const { return engine_->pending(); }

const hal::DeviceRef& Dma::device() const noexcept { return engine_->device(); }

void Dma::describe(FILE* stream, const char* prefix) const {
    const char* p = prefix ? prefix : "";
    const std::string backend(device()->backend_name());
    std::fprintf(stream, "%sdma: ze\n", p);
    std::fprintf(stream, "%sbackend: %s\n", p, backend.c_str());
    std::fprintf(stream, "%sdevice: %s\n", p, device()->properties().name.c_str());
    std::fprintf(stream, "%sordinal: %u\n", p, ordinal_);
    std::fprintf(stream, "%sindex: %u\n", p, index_);
    std::fprintf(stream, "%spending: %zu\n", p, pending());
    std::fprintf(stream, "%sclosed: %s\n", p, closed() ? "yes" : "no");
}

}  // namespace zehal::aml
