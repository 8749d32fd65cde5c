// The floating-point atomics that kernels built from SPIR-V by the compiler layer may use,
// in Level Zero's terms (ze_device_fp_atomic_ext_flags_t).
#pragma once

#include <cstdint>

namespace zehal::compiler {

// The bits of ze_device_fp_atomic_ext_flags_t, with the specification's values.
inline constexpr uint32_t kFpAtomicGlobalLoadStore = 1u << 0;  // load, store and exchange in global memory
inline constexpr uint32_t kFpAtomicGlobalAdd = 1u << 1;        // add and subtract in global memory
inline constexpr uint32_t kFpAtomicGlobalMinMax = 1u << 2;     // min and max in global memory
inline constexpr uint32_t kFpAtomicLocalLoadStore = 1u << 16;  // the same three in local memory
inline constexpr uint32_t kFpAtomicLocalAdd = 1u << 17;
inline constexpr uint32_t kFpAtomicLocalMinMax = 1u << 18;

// Load, store and exchange, add and subtract, min and max, in global and in local memory:
// host_builtins.cpp defines them for half, float and double alike, on the host and on
// NVPTX (native adds of float and double there, compare-and-swap loops for the rest).
inline constexpr uint32_t kFloatAtomics = kFpAtomicGlobalLoadStore | kFpAtomicGlobalAdd | kFpAtomicGlobalMinMax |
                                          kFpAtomicLocalLoadStore | kFpAtomicLocalAdd | kFpAtomicLocalMinMax;

}  // namespace zehal::compiler
