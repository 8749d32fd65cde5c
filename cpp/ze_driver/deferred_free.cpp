#include "deferred_free.hpp"

#include <condition_variable>
#include <deque>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>
#include <utility>

namespace zehal::ze_driver {
namespace {

// One allocation to free.
struct Request {
    hal::DeviceRef device;
    void* ptr;
};

// The requests and the one thread that frees them, started by the first request.
class DeferredFrees {
public:
    ze_result_t add(hal::DeviceRef device, void* ptr) {
        std::lock_guard lock(mu_);
        try {
            if (!started_) {
                std::thread(&DeferredFrees::run, this).detach();
                started_ = true;
            }
            requests_.push_back({std::move(device), ptr});
        } catch (const std::bad_alloc&) {
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        } catch (const std::system_error&) {
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        wake_.notify_one();
        return ZE_RESULT_SUCCESS;
    }

private:
    // Frees each request in turn; the free itself waits outside the lock, so requests keep
    // coming while one waits for its commands. A free that fails (a device lost, a pointer
    // freed twice by the program) has no caller left to tell.
    void run() {
        std::unique_lock lock(mu_);
        for (;;) {
            wake_.wait(lock, [&] { return !requests_.empty(); });
            Request next = std::move(requests_.front());
            requests_.pop_front();
            lock.unlock();
            (void)next.device->free(next.ptr);
            next.device.reset();
            lock.lock();
        }
    }

    std::mutex mu_;
    std::condition_variable wake_;
    std::deque<Request> requests_;
    bool started_ = false;
};

DeferredFrees& deferred_frees() {
    static auto* d = new DeferredFrees;  // its thread runs until the process exits
    return *d;
}

}  // namespace

ze_result_t free_later(hal::DeviceRef device, void* ptr) { return deferred_frees().add(std::move(device), ptr); }

}  // namespace zehal::ze_driver
