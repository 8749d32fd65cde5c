#include "hal/cuda/foreign_memory.hpp"

#include <cstdint>

namespace zehal::cuda {

std::optional<ze_result_t> ForeignCudaMemory::recognise(const void* p, size_t size, hal::Operand* out) const {
    unsigned int type = 0;
    int device = -1;
    unsigned int managed = 0;
    CUdeviceptr start = 0;
    size_t range = 0;
    CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_IS_MANAGED, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    void* values[] = {&type, &device, &managed, &start, &range};
    // Memory the driver does not know answers SUCCESS with a memory type of 0.
    const auto addr = reinterpret_cast<CUdeviceptr>(p);
    if (api_.cuPointerGetAttributes(5, which, values, addr) != CUDA_SUCCESS) return std::nullopt;
    if (type != CU_MEMORYTYPE_HOST && type != CU_MEMORYTYPE_DEVICE && type != CU_MEMORYTYPE_UNIFIED)
        return std::nullopt;
    if (range != 0 && (addr < start || size > range - (addr - start))) return ZE_RESULT_ERROR_INVALID_SIZE;
    hal::Operand o;
    o.zehal_allocation = false;
    o.allocation.info.base = reinterpret_cast<void*>(range ? start : addr);
    o.allocation.info.size = range ? range : size;
    if (type == CU_MEMORYTYPE_HOST) {
        o.placement = hal::Placement::own_host;
        o.allocation.info.kind = hal::MemoryKind::host;
    } else if (managed) {
        o.placement = hal::Placement::device;
        o.allocation.info.kind = hal::MemoryKind::shared;
    } else if (device == ordinal_) {
        o.placement = hal::Placement::device;
        o.allocation.info.kind = hal::MemoryKind::device;
    } else {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // another GPU's memory: no path here
    }
    *out = o;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::cuda
