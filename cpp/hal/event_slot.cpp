#include "hal/event_slot.hpp"

#include <cerrno>

namespace zehal::hal {

void SlotMutex::init(bool shared) noexcept {
    pthread_mutexattr_t attr;
    pthread_mutexattr_init(&attr);
    if (shared) {
        pthread_mutexattr_setpshared(&attr, PTHREAD_PROCESS_SHARED);
        pthread_mutexattr_setrobust(&attr, PTHREAD_MUTEX_ROBUST);
    }
    pthread_mutex_init(&mu_, &attr);
    pthread_mutexattr_destroy(&attr);
}

void SlotMutex::destroy() noexcept { pthread_mutex_destroy(&mu_); }

void SlotMutex::lock() noexcept {
    // A shared mutex whose holder died is handed over locked: the fields it guards may be
    // half written (a signal cut short), which the next signal or reset overwrites.
    if (pthread_mutex_lock(&mu_) == EOWNERDEAD) pthread_mutex_consistent(&mu_);
}

}  // namespace zehal::hal
