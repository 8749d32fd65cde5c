#include "hal/cuda/cuda_backend.hpp"

#include <string>
#include <vector>

#ifdef ZEHAL_HAVE_CUDA_H
#include "hal/cuda/cuda_device.hpp"
#include "hal/cuda/driver_api.hpp"
#endif

namespace zehal::cuda {

#ifdef ZEHAL_HAVE_CUDA_H
namespace {

class CudaBackend final : public hal::Backend {
public:
    explicit CudaBackend(std::vector<hal::DeviceRef> devices) : devices_(std::move(devices)) {}
    std::string_view name() const override { return "cuda"; }
    const std::vector<hal::DeviceRef>& devices() const override { return devices_; }

private:
    std::vector<hal::DeviceRef> devices_;
};

}  // namespace

hal::BackendStatus probe() {
    hal::BackendStatus status;
    status.name = "cuda";
    std::string why;
    const DriverApi* api = driver_api(&why);
    if (!api) {
        status.reason = why;
        return status;
    }
    int count = 0;
    if (CUresult r = api->cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
        status.reason = "cuDeviceGetCount failed: " + error_name(*api, r);
        return status;
    }
    if (count == 0) {
        status.reason = "no CUDA device";
        return status;
    }
    auto host = std::make_shared<HostMemory>(*api);
    std::vector<hal::DeviceRef> devices;
    for (int i = 0; i < count; ++i) {
        CUdevice handle = 0;
        if (CUresult r = api->cuDeviceGet(&handle, i); r != CUDA_SUCCESS) {
            why = "cuDeviceGet(" + std::to_string(i) + ") failed: " + error_name(*api, r);
            continue;
        }
        auto device = std::make_shared<CudaDevice>(*api, host, i, handle);
        if (device->describe(&why)) devices.push_back(std::move(device));
    }
    if (devices.empty()) {
        status.reason = why;
        return status;
    }
    // The devices (their primary contexts, streams and pinned memory) live until the process
    // exits, as the CUDA runtime's do: releasing them from static destructors would call
    // into a driver that may already be shutting down.
    static auto* const kept = new std::vector<hal::DeviceRef>();
    kept->insert(kept->end(), devices.begin(), devices.end());
    status.available = true;
    status.backend = std::make_shared<CudaBackend>(std::move(devices));
    return status;
}

#else

hal::BackendStatus probe() {
    hal::BackendStatus status;
    status.name = "cuda";
    status.reason = "built without CUDA headers (cuda.h was not found at build time)";
    return status;
}

#endif

}  // namespace zehal::cuda
