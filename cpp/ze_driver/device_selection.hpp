// Which of zehal's devices a program asked the driver for, through the environment the
// Level Zero loader's users set: ZE_AFFINITY_MASK.
#pragma once

#include <cstdint>
#include <string_view>

namespace zehal::ze_driver {

// Whether affinity mask `mask` selects the device at `index` of every device the driver
// could list (in listing order). An empty mask selects every device. Otherwise the mask is
// a comma-separated list of entries "N" (device N) or "N.M" (sub-device M of device N);
// zehal's devices have no sub-devices, so "N.0" names device N itself, as every hierarchy
// mode of ZE_FLAT_DEVICE_HIERARCHY (FLAT, COMPOSITE, COMBINED) sees it, and any other
// sub-device names nothing. Entries that are no such number are ignored.
bool affinity_selects(std::string_view mask, uint32_t index);

// ZE_AFFINITY_MASK of the environment; empty when unset.
std::string_view affinity_mask();

}  // namespace zehal::ze_driver
