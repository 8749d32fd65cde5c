// A mapping of an Area as Python holds it (shared by the area, layout and DMA bindings).
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "aml/area.hpp"
#include "aml/dma.hpp"
#include "bindings.hpp"
#include "python/deferred_release.hpp"
#include "python/gil.hpp"

namespace zehal::py {

// One mapping of an Area. Keeps its area alive. Host and shared memory speak the buffer
// protocol (writable 1-D bytes); every kind exports DLPack. close() unmaps once no export
// (memoryview, NumPy array, DLPack capsule) is left, after the copies using it completed.
//
// Which copies use it is not listed here: each copy's keep-alive (python/keep_alive.hpp),
// which its engine holds until it sees the copy done, holds one use of the buffer and a
// reference to it. close() counts the uses and has the engines that took them finish.
class Buffer {
public:
    Buffer(std::shared_ptr<aml::Area> area, void* ptr, size_t nbytes)
        : area_(std::move(area)),
          ptr_(ptr),
          nbytes_(nbytes) {}
    // No copy uses the buffer by now: a pending copy's keep-alive holds a reference to it
    // (its Buffer, or a Layout over it) and gives its use back before that reference.
    ~Buffer() {
        if (closed_ || !ptr_) return;
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
    // takes its use (its keep-alive) under one holding of the GIL, with no Python code
    // between them, so every copy a close() must wait for is counted by the time it looks.
    void* for_copy(std::string_view what) const {
        if (closers_ > 0 && !closed_)
            check(ZE_RESULT_ERROR_INVALID_NULL_HANDLE,
                  std::string(what) +
                      ": the buffer is being closed (close() waits for its copies and takes no new one)");
        return live(what);
    }

    // Unmaps once every copy submitted before it completed. Any number of threads may close
    // at once: each waits for those same copies, and the first to run after them unmaps.
    // Waits with a barrier on each engine that took a use (copies of an engine complete in
    // order, so that is the copies queued up to the buffer's last one, and those behind it
    // submitted before the close), then until every use is given back.
    void close() {
        if (closed_) return;
        if (exports_ > 0)
            throw pyb::buffer_error("zehal.Buffer.close: " + std::to_string(exports_) +
                                    " export(s) (memoryview, NumPy array, DLPack capsule) still use the memory");
        ++closers_;
        Closing closing{closers_};
        wait_for_uses();
        if (closed_) return;  // closed by another thread while this one waited
        // Another thread may have taken an export while this one waited without the GIL.
        if (exports_ > 0)
            throw pyb::buffer_error("zehal.Buffer.close: " + std::to_string(exports_) +
                                    " export(s) taken while close() waited for copies still use the memory");
        closed_ = true;
        check(unmap(), "Buffer.close");
    }

    // Remembers `engine` as one that runs commands on this buffer (GIL held; may throw
    // bad_alloc), for close() to finish them. Engines gone are forgotten here.
    void note_engine(const std::shared_ptr<aml::Dma>& engine) {
        bool known = false;
        std::erase_if(engines_, [&](const std::weak_ptr<aml::Dma>& w) {
            if (!w.owner_before(engine) && !engine.owner_before(w)) known = true;
            return w.expired();
        });
        if (!known) engines_.push_back(engine);
    }
    // A command on this buffer is pending: close() waits until drop_use() (any thread).
    void add_use() noexcept {
        // relaxed: taken with the GIL held, as close() reads it; only the drop publishes.
        uses_.fetch_add(1, std::memory_order_relaxed);
    }
    // A command on this buffer was seen done (any thread, GIL or not).
    void drop_use() noexcept {
        // acq_rel: close() reads 0 with acquire after every command was seen done; the last
        // drop wakes it.
        if (uses_.fetch_sub(1, std::memory_order_acq_rel) == 1) uses_.notify_all();
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

    // Waits, without the GIL, until no command uses this buffer: a barrier on each engine
    // that took a use has it see its commands done (their keep-alives then give the uses
    // back), then the count is waited for (a closed engine's closer gives them back). The
    // references the keep-alives gave back are dropped once the GIL is back.
    void wait_for_uses() {
        ReleaseDeferredOnExit release;
        // acquire: pairs with drop_use()'s release.
        if (uses_.load(std::memory_order_acquire) == 0) return;
        std::vector<std::shared_ptr<aml::Dma>> engines;
        for (const auto& w : engines_)
            if (auto e = w.lock()) engines.push_back(std::move(e));
        const ze_result_t r = without_gil([&] {
            for (const auto& e : engines) {
                const ze_result_t b = e->barrier();
                if (b != ZE_RESULT_SUCCESS && b != ZE_RESULT_ERROR_INVALID_NULL_HANDLE &&
                    b != ZE_RESULT_ERROR_DEVICE_LOST)
                    return b;
            }
            engines.clear();  // here, should one be the last reference (its close waits)
            // acquire: as above.
            for (uint32_t n; (n = uses_.load(std::memory_order_acquire)) != 0;)
                uses_.wait(n, std::memory_order_acquire);
            return ZE_RESULT_SUCCESS;
        });
        check(r, "Buffer.close: waiting for the copies that use the buffer");
    }

    const std::shared_ptr<aml::Area> area_;
    void* const ptr_;
    const size_t nbytes_;
    bool closed_ = false;  // guarded by the GIL, as every field below
    int exports_ = 0;
    int closers_ = 0;  // close() calls waiting for copies: new copies are refused meanwhile
    std::vector<std::weak_ptr<aml::Dma>> engines_;  // engines that took a use (note_engine)
    std::atomic<uint32_t> uses_{0};                 // pending commands on the buffer, any thread
};

using BufferRef = std::shared_ptr<Buffer>;

}  // namespace zehal::py

ZEHAL_PY_MADE_CASTER(zehal::py::Buffer)
