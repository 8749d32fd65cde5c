// The deferred policy of zeMemFreeExt: the call returns at once and the allocation is freed
// once the commands that use it are over, by a thread of the driver's own.
#pragma once

#include "hal/device.hpp"

namespace zehal::ze_driver {

// Hands allocation `ptr` of `device` to the driver's freeing thread, which frees it with the
// HAL's free (that free waits for the commands using it, holding no lock of the caller's).
// The frees run one after another, in the order they were handed over. OUT_OF_HOST_MEMORY
// when the thread cannot be started or the request not recorded: nothing is freed then.
ze_result_t free_later(hal::DeviceRef device, void* ptr);

}  // namespace zehal::ze_driver
