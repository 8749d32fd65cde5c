// Kernels of the CUDA backend.
#include "hal/cuda/cuda_device.hpp"
#include "hal/cuda/cuda_queue.hpp"

namespace zehal::cuda {

ze_result_t CudaDevice::create_module(hal::ModuleFormat, std::span<const uint8_t>, std::string_view,
                                      std::shared_ptr<hal::Module>*, std::string* log) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (log) *log = "the CUDA device does not build modules yet";
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ze_result_t CudaDevice::record_on_stream(uintptr_t, const hal::EventRef& event, hal::StreamMark) {
    if (lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    if (!event) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

ze_result_t CudaQueue::append_launch(hal::Kernel&, const hal::GroupCount&, const hal::EventRef&,
                                     std::span<const hal::EventRef>) {
    if (device_->lost()) return ZE_RESULT_ERROR_DEVICE_LOST;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace zehal::cuda
