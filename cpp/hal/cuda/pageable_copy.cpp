#include "hal/cuda/pageable_copy.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <new>
#include <utility>

namespace zehal::cuda {

namespace {

// What one host function does: copy `size` bytes, or fill them with the pattern.
struct HostTask {
    void* dst;
    const void* src;
    size_t size;
    size_t pattern_size;  // 0: a copy
    uint8_t pattern[128];
    hal::PointerRegistry::InFlight* holds[2];  // released once the copy or fill is done
};

// Runs on CUDA's callback thread, in stream order; makes no CUDA call (the driver forbids it).
void CUDA_CB run_host_task(void* data) {
    auto* t = static_cast<HostTask*>(data);
    if (t->pattern_size == 0) {
        std::memcpy(t->dst, t->src, t->size);
    } else {
        auto* out = static_cast<uint8_t*>(t->dst);
        for (size_t off = 0; off < t->size; off += t->pattern_size) std::memcpy(out + off, t->pattern, t->pattern_size);
    }
    for (hal::PointerRegistry::InFlight* h : t->holds) hal::PointerRegistry::release(h);
    delete t;
}

CUdeviceptr address(const void* p) noexcept { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

void PageableCopier::release() noexcept {
    if (staging_) api_.cuMemFreeHost(staging_);
    staging_ = nullptr;
}

CUresult PageableCopier::staging(char** out) {
    if (!staging_) {
        void* p = nullptr;
        if (CUresult r = api_.cuMemHostAlloc(&p, kStagingBytes, CU_MEMHOSTALLOC_PORTABLE); r != CUDA_SUCCESS) return r;
        staging_ = static_cast<char*>(p);
    }
    *out = staging_;
    return CUDA_SUCCESS;
}

CUresult PageableCopier::host_task(CUstream stream, void* dst, const void* src, size_t size, const uint8_t* pattern,
                                   size_t pattern_size, Holds* holds) {
    auto* t = new (std::nothrow) HostTask{dst, src, size, pattern_size, {}, {nullptr, nullptr}};
    if (!t) return CUDA_ERROR_OUT_OF_MEMORY;
    if (pattern_size) std::memcpy(t->pattern, pattern, pattern_size);
    if (holds) std::copy(std::begin(*holds), std::end(*holds), t->holds);
    const CUresult r = api_.cuLaunchHostFunc(stream, run_host_task, t);
    if (r != CUDA_SUCCESS) {
        delete t;  // never enqueued: the holds stay with the caller
        return r;
    }
    if (holds) std::fill(std::begin(*holds), std::end(*holds), nullptr);
    return r;
}

CUresult PageableCopier::fail(CUstream stream, CUresult r, bool enqueued, Holds& holds) noexcept {
    // What was enqueued may still touch the memory: it must have run before the release.
    if (enqueued && (holds[0] || holds[1])) api_.cuStreamSynchronize(stream);
    for (hal::PointerRegistry::InFlight*& h : holds) hal::PointerRegistry::release(std::exchange(h, nullptr));
    return r;
}

CUresult PageableCopier::copy(CUstream stream, void* dst, bool dst_host, const void* src, bool src_host,
                              size_t size, Holds& holds) {
    if (dst_host && src_host) {
        const CUresult r = host_task(stream, dst, src, size, nullptr, 0, &holds);
        return r == CUDA_SUCCESS ? r : fail(stream, r, false, holds);
    }
    char* stage = nullptr;
    if (CUresult r = staging(&stage); r != CUDA_SUCCESS) return fail(stream, r, false, holds);
    // The stream runs one command at a time: each piece's host function and copy are done
    // with the staging buffer before the next piece's start.
    auto* to = static_cast<char*>(dst);
    const auto* from = static_cast<const char*>(src);
    // The host memory is touched by host functions only: the last piece's takes the holds.
    for (size_t off = 0; off < size; off += kStagingBytes) {
        const size_t n = std::min(kStagingBytes, size - off);
        Holds* last = off + n == size ? &holds : nullptr;
        CUresult r = CUDA_SUCCESS;
        if (src_host) {  // host → device or shared memory
            r = host_task(stream, stage, from + off, n, nullptr, 0, last);
            if (r == CUDA_SUCCESS) r = api_.cuMemcpyAsync(address(to + off), address(stage), n, stream);
        } else {  // device or shared memory → host
            r = api_.cuMemcpyAsync(address(stage), address(from + off), n, stream);
            if (r == CUDA_SUCCESS) r = host_task(stream, to + off, stage, n, nullptr, 0, last);
        }
        if (r != CUDA_SUCCESS) return fail(stream, r, true, holds);
    }
    return CUDA_SUCCESS;
}

CUresult PageableCopier::fill(CUstream stream, void* dst, const uint8_t* pattern, size_t pattern_size, size_t size,
                              Holds& holds) {
    const CUresult r = host_task(stream, dst, nullptr, size, pattern, pattern_size, &holds);
    return r == CUDA_SUCCESS ? r : fail(stream, r, false, holds);
}

}  // namespace zehal::cuda
