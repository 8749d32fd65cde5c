// The C handles of events and event pools (zehal/events.h) and the HAL objects behind them.
#pragma once

#include "zehal/events.h"
#include "hal/event.hpp"

namespace zehal::capi {

// The event behind a live `handle`; null for a null, destroyed or foreign handle.
hal::EventRef event_from_handle(zehal_event_t handle);
// The pool behind a live `handle`; null as above.
std::shared_ptr<hal::EventPool> event_pool_from_handle(zehal_event_pool_t handle);

}  // namespace zehal::capi
