// DMA engines (contract §2.4): asynchronous copies on one engine of one device.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>

#include "zehal/ze_result.h"
#include "aml/layout.hpp"
#include "aml/request.hpp"
#include "hal/device.hpp"
#include "hal/event.hpp"
#include "hal/module.hpp"

namespace zehal::aml {

namespace detail {
class Engine;
}

// Bytes the copy_1D operator moves from `src` to `dst`: element_size x dims of the source.
// INVALID_ARGUMENT unless both are one-dimensional with unit stride; INVALID_SIZE when the
// destination is smaller than the source.
ze_result_t copy_1d_size(const Layout& dst, const Layout& src, size_t* bytes);

// One asynchronous immediate queue on engine `index` of engine group `ordinal` (1: copy
// engines, 0: compute engines). Copies complete in submission order. Every method is
// thread-safe: many threads may submit at once. Destruction waits for everything (close()).
class Dma {
public:
    // An engine on `device`. INVALID_NULL_HANDLE for a null device; INVALID_ARGUMENT for an
    // ordinal other than 0 and 1 or an index past that group's engines; device errors pass.
    static ze_result_t create(const hal::DeviceRef& device, uint32_t ordinal, uint32_t index,
                              std::shared_ptr<Dma>* out);

    ~Dma();
    Dma(const Dma&) = delete;
    Dma& operator=(const Dma&) = delete;

    // Copies `size` bytes from `src` to `dst` (device or shared memory of the device, or
    // host memory of any backend: contract §2.2) and returns at once. `request` receives a Request, or
    // is null for fire-and-forget (only barrier() waits for it). `signal`, when given, is
    // signalled by the copy itself (kernel timestamps then measure the copy) and is the
    // request's event. `keep` (may be null), what the operands need to stay valid, is held
    // by the engine until the copy is seen done (Request), fire-and-forget copies included;
    // on failure it is dropped before the return. INVALID_NULL_POINTER, INVALID_SIZE for 0
    // bytes, OVERLAPPING_REGIONS, INVALID_NULL_HANDLE once closed; else the queue's result
    // (INVALID_ARGUMENT for memory of another device, INVALID_SIZE past an allocation,
    // DEVICE_LOST, ...).
    ze_result_t copy(void* dst, const void* src, size_t size, std::shared_ptr<Request>* request = nullptr,
                     const hal::EventRef& signal = {}, Request::KeepAlive keep = {});
    // The copy_1D operator: element_size x dims bytes between two dense one-dimensional
    // layouts of unit stride. INVALID_ARGUMENT for other layouts, INVALID_SIZE when the
    // destination is smaller than the source; then as the pointer copy.
    ze_result_t copy(const Layout& dst, const Layout& src, std::shared_ptr<Request>* request = nullptr,
                     const hal::EventRef& signal = {}, Request::KeepAlive keep = {});

    // Two steps of copy(), for operators that append the copy themselves: a request with
    // no copy yet, then the copy for it (request null: fire-and-forget). A request carries
    // one copy: a second append_copy for it is INVALID_ARGUMENT.
    ze_result_t new_request(std::shared_ptr<Request>* out, const hal::EventRef& signal = {});
    ze_result_t append_copy(void* dst, const void* src, size_t size, Request* request);

    // Launches `kernel` (of this engine's device) over `groups` work-groups with its current
    // arguments and group size (a snapshot) and returns at once; `request`, `signal` and
    // `keep` as for copy(). INVALID_NULL_HANDLE once closed; else the queue's result
    // (INVALID_ARGUMENT for an unset argument or memory the device may not use,
    // INVALID_GROUP_SIZE_DIMENSION for a zero group count, DEVICE_LOST, ...).
    ze_result_t launch(hal::Kernel& kernel, const hal::GroupCount& groups, std::shared_ptr<Request>* request = nullptr,
                       const hal::EventRef& signal = {}, Request::KeepAlive keep = {});
    // As launch(), with the group counts read from device-readable memory at `groups` when
    // the launch runs, not now (hal::Queue::append_launch_indirect): a copy into them
    // queued before it is seen. UNSUPPORTED_FEATURE where the backend cannot read them in
    // queue order (CUDA).
    ze_result_t launch_indirect(const hal::KernelRef& kernel, const hal::GroupCount* groups,
                                std::shared_ptr<Request>* request = nullptr, const hal::EventRef& signal = {},
                                Request::KeepAlive keep = {});

    // Returns once every copy submitted before it completed (fire-and-forget included);
    // their requests are then done, their keep-alives dropped, and wait() on them returns
    // at once. Waits for the newest copy's request when it has one (copies complete in
    // submission order), else appends a barrier command and waits for it.
    ze_result_t barrier();
    // Marks done the requests whose copies completed.
    void poll();
    // Keeps the flags word of `request` (request.handle()->flags) current with no further
    // call: a watcher thread of the engine marks it done when its copy completes. For
    // callers that read the word instead of calling flags(), as C callers do. Costs a
    // thread wake-up per watched completion.
    void watch(Request& request);
    // Refuses later copies (INVALID_NULL_HANDLE), then waits for everything. Idempotent;
    // returns the wait's result.
    ze_result_t close();
    bool closed() const;

    // True when `request` was made by this engine.
    bool owns(const Request& request) const noexcept;
    // Requests submitted whose copies have not completed (their events are asked).
    size_t pending() const;

    const hal::DeviceRef& device() const noexcept;
    uint32_t ordinal() const noexcept { return ordinal_; }
    uint32_t index() const noexcept { return index_; }

    // Describes the engine (backend, device, ordinal, index, pending requests).
    void describe(FILE* stream, const char* prefix) const;

private:
    Dma(std::shared_ptr<detail::Engine> engine, uint32_t ordinal, uint32_t index);

    const std::shared_ptr<detail::Engine> engine_;
    const uint32_t ordinal_;
    const uint32_t index_;
};

}  // namespace zehal::aml
