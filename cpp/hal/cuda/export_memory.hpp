// Metric export memory on CUDA: device memory made with the virtual memory management API
// (cuMemCreate + cuMemMap), exported as a dma-buf fd (cuMemGetHandleForAddressRange).
// Importing that fd maps the same physical memory a second time, at another address.
#pragma once

#include <cstddef>
#include <mutex>
#include <vector>

#include "hal/cuda/driver_api.hpp"

namespace zehal::cuda {

// One exported region of one device. Thread-safe.
class ExportMemory {
public:
    ExportMemory(const DriverApi& api, CUdevice device, int ordinal) : api_(api), device_(device), ordinal_(ordinal) {}
    ~ExportMemory();
    ExportMemory(const ExportMemory&) = delete;
    ExportMemory& operator=(const ExportMemory&) = delete;

    // Creates the memory (one allocation granule, zero-filled) and its dma-buf on first use;
    // the device's context is current. UNSUPPORTED_FEATURE when the driver refuses the
    // dma-buf; other failures as to_ze_result().
    ze_result_t export_fd(int* fd, size_t* size);

    // Maps the memory behind `fd` again when `fd` is (a dup of) this region's dma-buf:
    // *out the new address, *mapped its length (the whole region). `size` must not exceed
    // the region (INVALID_SIZE). A dma-buf from elsewhere is UNSUPPORTED_FEATURE: the CUDA
    // driver imports opaque fds of its own (cuImportExternalMemory), not dma-bufs.
    ze_result_t import_fd(int fd, size_t size, void** out, size_t* mapped);
    // Unmaps an address import_fd returned.
    void release(void* p, size_t mapped);

private:
    ze_result_t create_locked();
    CUresult map_locked(CUdeviceptr* va);

    const DriverApi& api_;
    const CUdevice device_;
    const int ordinal_;
    std::mutex mu_;
    CUmemGenericAllocationHandle handle_ = 0;
    CUdeviceptr base_ = 0;
    size_t size_ = 0;
    int fd_ = -1;
    ze_result_t failed_ = ZE_RESULT_SUCCESS;  // sticky result of a creation that failed
};

}  // namespace zehal::cuda
