// Memory no zehal allocation holds, as the CUDA driver knows it (contract §2.2): device or
// managed memory another library allocated (CuPy, PyTorch, cuMemAlloc called directly) is
// used as device memory, host memory the driver pinned takes the copy engines directly; the
// rest is system memory, staged by PageableCopier.
#pragma once

#include <optional>

#include "hal/cuda/driver_api.hpp"
#include "hal/host_memory.hpp"

namespace zehal::cuda {

// The recogniser of one CUDA device (`ordinal`). Thread-safe; asks the driver on each call
// (no context needs to be current: the driver's unified addressing answers for every one).
class ForeignCudaMemory final : public hal::ForeignMemory {
public:
    ForeignCudaMemory(const DriverApi& api, int ordinal) noexcept : api_(api), ordinal_(ordinal) {}

    // Device memory of this device, or managed memory of any: Placement::device. Host
    // memory the driver pinned or registered: Placement::own_host (zehal_allocation false:
    // the queue fills it on the CPU). Device memory of another device: INVALID_ARGUMENT. A
    // range past the end of the driver's allocation: INVALID_SIZE. Anything else (or a
    // driver that cannot tell): nullopt, system memory.
    std::optional<ze_result_t> recognise(const void* p, size_t size, hal::Operand* out) const override;

private:
    const DriverApi& api_;
    const int ordinal_;
};

}  // namespace zehal::cuda
