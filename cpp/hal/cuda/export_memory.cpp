#include "hal/cuda/export_memory.hpp"

#include <sys/stat.h>
#include <unistd.h>

namespace zehal::cuda {

ExportMemory::~ExportMemory() {
    if (fd_ >= 0) close(fd_);
    if (base_) {
        api_.cuMemUnmap(base_, size_);
        api_.cuMemAddressFree(base_, size_);
    }
    if (handle_) api_.cuMemRelease(handle_);
}

CUresult ExportMemory::map_locked(CUdeviceptr* va) {
    CUresult r = api_.cuMemAddressReserve(va, size_, 0, 0, 0);
    if (r != CUDA_SUCCESS) return r;
    r = api_.cuMemMap(*va, size_, 0, handle_, 0);
    if (r != CUDA_SUCCESS) {
        api_.cuMemAddressFree(*va, size_);
        return r;
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id = ordinal_;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    r = api_.cuMemSetAccess(*va, size_, &access, 1);
    if (r != CUDA_SUCCESS) {
        api_.cuMemUnmap(*va, size_);
        api_.cuMemAddressFree(*va, size_);
    }
    return r;
}

ze_result_t ExportMemory::create_locked() {
    int supported = 0;
    api_.cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, device_);
    if (!supported) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = ordinal_;
    size_t granule = 0;
    CUresult r = api_.cuMemGetAllocationGranularity(&granule, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (r != CUDA_SUCCESS) return to_ze_result(r);
    size_ = granule;
    if ((r = api_.cuMemCreate(&handle_, size_, &prop, 0)) != CUDA_SUCCESS) {
        handle_ = 0;
        return to_ze_result(r);
    }
    if ((r = map_locked(&base_)) != CUDA_SUCCESS) {
        base_ = 0;
        return to_ze_result(r);
    }
    // Fresh memory holds whatever was there before: start from zeros, as the sim does, and
    // wait, so that no later command on another stream races the fill.
    if ((r = api_.cuMemsetD8Async(base_, 0, size_, nullptr)) != CUDA_SUCCESS) return to_ze_result(r);
    if ((r = api_.cuStreamSynchronize(nullptr)) != CUDA_SUCCESS) return to_ze_result(r);
    int fd = -1;
    r = api_.cuMemGetHandleForAddressRange(&fd, base_, size_, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0);
    if (r != CUDA_SUCCESS)
        return r == CUDA_ERROR_NOT_SUPPORTED || r == CUDA_ERROR_INVALID_VALUE ? ZE_RESULT_ERROR_UNSUPPORTED_FEATURE
                                                                              : to_ze_result(r);
    fd_ = fd;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ExportMemory::export_fd(int* fd, size_t* size) {
    std::lock_guard lock(mu_);
    if (fd_ < 0 && failed_ == ZE_RESULT_SUCCESS) {
        if (ze_result_t r = create_locked(); r != ZE_RESULT_SUCCESS) failed_ = r;
    }
    if (failed_ != ZE_RESULT_SUCCESS) return failed_;
    *fd = fd_;
    *size = size_;
    return ZE_RESULT_SUCCESS;
}

ze_result_t ExportMemory::import_fd(int fd, size_t size, void** out, size_t* mapped) {
    struct stat theirs {};
    if (fstat(fd, &theirs) != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    std::lock_guard lock(mu_);
    struct stat ours {};
    if (fd_ < 0 || fstat(fd_, &ours) != 0 || ours.st_dev != theirs.st_dev || ours.st_ino != theirs.st_ino)
        return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (size > size_) return ZE_RESULT_ERROR_INVALID_SIZE;
    CUdeviceptr va = 0;
    if (CUresult r = map_locked(&va); r != CUDA_SUCCESS) return to_ze_result(r);
    *out = reinterpret_cast<void*>(va);
    *mapped = size_;
    return ZE_RESULT_SUCCESS;
}

void ExportMemory::release(void* p, size_t mapped) {
    const auto va = reinterpret_cast<CUdeviceptr>(p);
    api_.cuMemUnmap(va, mapped);
    api_.cuMemAddressFree(va, mapped);
}

}  // namespace zehal::cuda
