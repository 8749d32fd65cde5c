// The shared state of a Dma engine: its queue, event cache and the requests it tracks.
// Internal to cpp/aml: Dma is the public face, Request keeps the engine alive.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>

#include "zehal/ze_result.h"
#include "aml/event_cache.hpp"
#include "hal/device.hpp"
#include "hal/queue.hpp"

namespace zehal::aml {

class Request;

namespace detail {

// Tracks pending requests in submission order in an intrusive list (a pending request is
// kept alive by the list), so that barriers and polls can mark them done.
class Engine : public std::enable_shared_from_this<Engine> {
public:
    Engine(hal::DeviceRef device, std::shared_ptr<hal::Queue> queue);

    // A request whose copy will signal `signal` (null: an event of the cache).
    ze_result_t new_request(const hal::EventRef& signal, std::shared_ptr<Request>* out);
    // Appends the copy of `size` bytes; `request` (may be null) gets its event signalled.
    // INVALID_NULL_POINTER, INVALID_SIZE (0), OVERLAPPING_REGIONS, INVALID_NULL_HANDLE once
    // closed, INVALID_ARGUMENT for a request of another engine or one that already has its
    // copy; else the queue's result.
    ze_result_t append_copy(void* dst, const void* src, size_t size, Request* request, const hal::EventRef& signal);
    // Waits until every copy appended before it completed, then marks their requests done.
    ze_result_t barrier();
    // Marks done the requests whose copies completed (oldest first, up to the first pending).
    void poll();
    // Drops a done request from the tracked list.
    void untrack(Request* request);
    // Refuses later appends, waits for everything, marks every request done.
    ze_result_t close();
    bool closed() const;
    // Number of tracked (not yet observed done) requests.
    size_t tracked() const;

    const hal::DeviceRef& device() const noexcept { return device_; }
    hal::Queue& queue() const noexcept { return *queue_; }
    EventCache& events() noexcept { return events_; }

private:
    // barrier(); `allow_closed` lets close() wait after refusing new copies.
    ze_result_t barrier_impl(bool allow_closed);
    // Unlinks `r` (mutex_ held); its keep-alive reference moves into *keep.
    void unlink(Request* r, std::shared_ptr<Request>* keep);

    const hal::DeviceRef device_;
    const std::shared_ptr<hal::Queue> queue_;
    EventCache events_;

    mutable std::mutex mutex_;
    Request* head_ = nullptr;  // oldest tracked request, guarded by mutex_
    Request* tail_ = nullptr;  // guarded by mutex_
    size_t tracked_ = 0;       // guarded by mutex_
    uint64_t next_seq_ = 0;    // guarded by mutex_
    bool closed_ = false;      // guarded by mutex_
};

}  // namespace detail
}  // namespace zehal::aml
