// The floating-point atomics that kernels built from SPIR-V by the compiler layer may use,
// in Level Zero's terms (ze_device_fp_atomic_ext_flags_t).
#pragma once

#include <level_zero/ze_api.h>

#include <cstdint>

namespace zehal::compiler {

// Load, store and exchange, add and subtract, min and max, in global and in local memory:
// host_builtins.cpp defines them for half, float and double alike, on the host and on
// NVPTX (native adds of float and double there, compare-and-swap loops for the rest).
inline constexpr uint32_t kFloatAtomics = ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_LOAD_STORE |
                                          ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_ADD |
                                          ZE_DEVICE_FP_ATOMIC_EXT_FLAG_GLOBAL_MIN_MAX |
                                          ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_LOAD_STORE |
                                          ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_ADD |
                                          ZE_DEVICE_FP_ATOMIC_EXT_FLAG_LOCAL_MIN_MAX;

}  // namespace zehal::compiler
