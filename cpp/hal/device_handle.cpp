#include "hal/device_handle.hpp"

namespace zehal::capi {

hal::Device* device_from_handle(zehal_device_t handle) noexcept { return reinterpret_cast<hal::Device*>(handle); }

zehal_device_t handle_from_device(hal::Device* device) noexcept { return reinterpret_cast<zehal_device_t>(device); }

}  // namespace zehal::capi
