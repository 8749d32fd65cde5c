#include "aml/event_cache.hpp"

#include <algorithm>

namespace zehal::aml {

ze_result_t EventCache::acquire(hal::EventRef* out) {
    std::lock_guard lock(mutex_);
    if (free_.empty()) {
        std::shared_ptr<hal::EventPool> pool;
        if (ze_result_t r = device_->create_event_pool(next_pool_size_, hal::kPoolHostVisible, &pool);
            r != ZE_RESULT_SUCCESS)
            return r;
        const uint32_t count = pool->count();
        free_.reserve(free_.size() + count);
        // Reversed, so that events are handed out in index order.
        for (uint32_t i = count; i-- > 0;) {
            hal::EventRef event;
            if (ze_result_t r = pool->event(i, &event); r != ZE_RESULT_SUCCESS) return r;
            free_.push_back(std::move(event));
        }
        next_pool_size_ = std::min(next_pool_size_ * 2, kMaxPoolSize);
    }
    *out = std::move(free_.back());
    free_.pop_back();
    return ZE_RESULT_SUCCESS;
}

void EventCache::release(hal::EventRef event) {
    if (!event || event->host_reset() != ZE_RESULT_SUCCESS) return;
    std::lock_guard lock(mutex_);
    free_.push_back(std::move(event));
}

}  // namespace zehal::aml
