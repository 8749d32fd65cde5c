// A mapping of an Area as Python holds it (shared by the area, layout and DMA bindings).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aml/area.hpp"
#include "aml/request.hpp"
#include "bindings.hpp"
#include "python/gil.hpp"

namespace zehal::py {

// One mapping of an Area. Keeps its area alive. Host and shared memory speak the buffer
// protocol (writable 1-D bytes); every kind exports DLPack. close() unmaps once no export
// (memoryview, NumPy array, DLPack capsule) is left, after the copies using it completed.
class Buffer {
public:
    Buffer(std::shared_ptr<aml::Area> area, void* ptr, size_t nbytes)
        : area_(std::move(area)),
          ptr_(ptr),
          nbytes_(nbytes) {}
    ~Buffer() {
        if (closed_ || !ptr_) return;
        // Never unmapped under a copy (contract §11). Waited for without touching the GIL
        // (a DLPack deleter may drop the last reference from any thread); the copies finish
        // on the engines whatever the GIL does.
        for (const auto& r : pending_users()) r->wait();
        unmap();
    }
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;

    // The pointer, or InvalidArgumentError (INVALID_NULL_HANDLE) once closed.
    void* live(std::string_view what) const {
        if (closed_) check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE, std::string(what) + ": the buffer is closed");
        return ptr_;
    }

    // The pointer for a new copy: as live(), and refused as well while a close() waits for
    // the copies already submitted (it would unmap under a new one). A copy calls this and
    // add_user() under one holding of the GIL, with no Python code between them, so every
    // copy a close() must wait for is listed by the time it looks.
    void* for_copy(std::string_view what) const {
        if (closers_ > 0 && !closed_)
            check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                  std::string(what) +
                      ": the buffer is being closed (close() waits for its copies and takes no new one)");
        return live(what);
    }

    // Unmaps once every copy submitted before it completed. Any number of threads may close
    // at once: each waits for those same copies, and the first to run after them unmaps.
    void close() {
        if (closed_) return;
        if (exports_ > 0)
            throw pyb::buffer_error("zehal.Buffer.close: " + std::to_string(exports_) +
                                    " export(s) (memoryview, NumPy array, DLPack capsule) still use the memory");
        ++closers_;
        Closing closing{closers_};
        wait_for_users();
        if (closed_) return;  // closed by another thread while this one waited
        // Another thread may have taken an export while this one waited without the GIL.
        if (exports_ > 0)
            throw pyb::buffer_error("zehal.Buffer.close: " + std::to_string(exports_) +
                                    " export(s) taken while close() waited for copies still use the memory");
        closed_ = true;
        check(unmap(), "Buffer.close");
    }

    // Records a copy that reads or writes this buffer: close() waits for it.
    void add_user(const std::shared_ptr<aml::Request>& request) {
        std::erase_if(users_, [](const std::weak_ptr<aml::Request>& w) {
            auto r = w.lock();
            return !r || r->done();
        });
        users_.push_back(request);
    }

    bool closed() const { return closed_; }
    size_t nbytes() const { return nbytes_; }
    hal::MemoryKind kind() const { return area_->kind(); }
    const std::shared_ptr<aml::Area>& area() const { return area_; }
    const hal::DeviceRef& device() const { return area_->device(); }
    bool host_accessible() const { return kind() != hal::MemoryKind::device; }
    int exports() const { return exports_; }
    void add_export() { ++exports_; }
    void drop_export() { --exports_; }

private:
    // Gives the memory back to the area (a pool finds the block by its size).
    ze_result_t unmap() noexcept { return area_->pool() ? area_->unmap(ptr_, nbytes_) : area_->unmap(ptr_); }

    // Counts one close() in progress while it lives (destroyed with the GIL held: the
    // waits inside close() take it back before returning or throwing).
    struct Closing {
        int& closers;
        ~Closing() { --closers; }
    };

    // Waits, without the GIL, for the copies still using this buffer. The list stays as it
    // is: a second close() waits for the same copies.
    void wait_for_users() {
        const std::vector<std::shared_ptr<aml::Request>> pending = pending_users();
        if (pending.empty()) return;
        without_gil([&] {
            for (const auto& r : pending) r->wait();
        });
    }

    // The copies still using this buffer (those done or gone are dropped from the list).
    std::vector<std::shared_ptr<aml::Request>> pending_users() {
        std::vector<std::shared_ptr<aml::Request>> pending;
        std::erase_if(users_, [&](const std::weak_ptr<aml::Request>& w) {
            auto r = w.lock();
            if (!r || r->done()) return true;
            pending.push_back(std::move(r));
            return false;
        });
        return pending;
    }

    const std::shared_ptr<aml::Area> area_;
    void* const ptr_;
    const size_t nbytes_;
    bool closed_ = false;  // guarded by the GIL, as every field below
    int exports_ = 0;
    int closers_ = 0;  // close() calls waiting for copies: new copies are refused meanwhile
    std::vector<std::weak_ptr<aml::Request>> users_;
};

using BufferRef = std::shared_ptr<Buffer>;

}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::Buffer)
