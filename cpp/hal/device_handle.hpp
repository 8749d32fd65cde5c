// The C handle of a device (zehal_device_t) and the hal::Device behind it.
#pragma once

#include "zehal/device.h"
#include "hal/device.hpp"

namespace zehal::capi {

// The device behind `handle` (null for a null handle). A handle is the hal::Device*
// itself; devices handed out as handles live until the process exits.
hal::Device* device_from_handle(zehal_device_t handle) noexcept;
// The handle of `device`.
zehal_device_t handle_from_device(hal::Device* device) noexcept;

}  // namespace zehal::capi
