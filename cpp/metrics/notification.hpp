// The event a metric streamer or tracer signals once its data is readable, and which events
// may serve a device (contract §5.1, docs/metrics.md).
#pragma once

#include <cstddef>
#include <utility>

#include "zehal/ze_result.h"
#include "hal/device.hpp"

namespace zehal::metrics {

// A notification event, with what its maker knows of the pool it came from. A streamer or
// tracer of a device takes an event of one of the device's own pools; and, where
// `made_for_device` says the event's pool was made for that device too (a Level Zero pool
// created for several devices: its driver knows which), an event of another device's pool
// that the device signals (hal::Device::signals_event). Made from a bare event (implicitly,
// as the C, C++ and Python APIs pass one), the own-device rule holds.
struct Notification {
    // No event.
    Notification() = default;
    // No event (a null event argument).
    Notification(std::nullptr_t) {}  // NOLINT(google-explicit-constructor): as a null EventRef
    // `e` (null: none), which must be of the device's own pools.
    Notification(hal::EventRef e) : event(std::move(e)) {}  // NOLINT(google-explicit-constructor): as an EventRef
    // `e`, whose pool was made for the device (`made_for`) or not.
    Notification(hal::EventRef e, bool made_for) : event(std::move(e)), made_for_device(made_for) {}

    hal::EventRef event;           // null: none
    bool made_for_device = false;  // the event's pool was made for the streamer's or tracer's device
};

// SUCCESS when `device`'s streamer or tracer may signal `n` (no event included);
// INVALID_ARGUMENT for an event of a pool without HOST_VISIBLE, or of another device's pool
// unless that pool was made for `device` and `device` signals its events.
ze_result_t check_notification(const hal::Device& device, const Notification& n);

}  // namespace zehal::metrics
