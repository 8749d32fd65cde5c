#include "hal/cuda/pageable_copy.hpp"

#include <algorithm>
#include <bit>
#include <cstdlib>
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

// The largest chunk asked for by the environment, or kDefaultChunkBytes.
size_t chunk_from_environment() noexcept {
    const char* text = std::getenv("ZEHAL_CUDA_STAGING_CHUNK_BYTES");
    if (!text || !*text) return PageableCopier::kDefaultChunkBytes;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (*end != '\0' || v < PageableCopier::kMinChunkBytes || v > (size_t{256} << 20) || !std::has_single_bit(v))
        return PageableCopier::kDefaultChunkBytes;
    return static_cast<size_t>(v);
}

}  // namespace

PageableCopier::PageableCopier(const DriverApi& api, size_t chunk_bytes) noexcept
    : api_(api),
      chunk_bytes_(std::max(chunk_bytes ? chunk_bytes : chunk_from_environment(), kMinChunkBytes)) {}

void PageableCopier::release() noexcept {
    // A command that failed part-way may have left host functions on the side stream that
    // the queue's stream never waited for: they end before the buffers go.
    if (side_) api_.cuStreamSynchronize(side_);
    if (staging_) api_.cuMemFreeHost(staging_);
    staging_ = nullptr;
    for (CUevent* e : {&start_, &staged_[0], &staged_[1], &drained_[0], &drained_[1]}) {
        if (*e) api_.cuEventDestroy(*e);
        *e = nullptr;
    }
    if (side_) api_.cuStreamDestroy(side_);
    side_ = nullptr;
}

size_t PageableCopier::chunk_for(size_t size) const noexcept {
    return std::clamp(std::bit_ceil(std::max<size_t>(size / 4, 1)), kMinChunkBytes, chunk_bytes_);
}

CUresult PageableCopier::prepare() {
    if (staging_) return CUDA_SUCCESS;
    void* p = nullptr;
    CUresult r = api_.cuMemHostAlloc(&p, 2 * chunk_bytes_, CU_MEMHOSTALLOC_PORTABLE);
    if (r != CUDA_SUCCESS) return r;
    staging_ = static_cast<char*>(p);
    r = api_.cuStreamCreate(&side_, CU_STREAM_NON_BLOCKING);
    for (CUevent* e : {&start_, &staged_[0], &staged_[1], &drained_[0], &drained_[1]})
        if (r == CUDA_SUCCESS) r = api_.cuEventCreate(e, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) release();  // nothing was enqueued with them yet
    return r;
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
    if (enqueued && (holds[0] || holds[1])) {
        api_.cuStreamSynchronize(stream);
        if (side_) api_.cuStreamSynchronize(side_);
    }
    for (hal::PointerRegistry::InFlight*& h : holds) hal::PointerRegistry::release(std::exchange(h, nullptr));
    return r;
}

CUresult PageableCopier::copy(CUstream stream, void* dst, bool dst_host, const void* src, bool src_host, size_t size,
                              bool idle, Holds& holds) {
    if (dst_host && src_host) {
        const CUresult r = host_task(stream, dst, src, size, nullptr, 0, &holds);
        return r == CUDA_SUCCESS ? r : fail(stream, r, false, holds);
    }
    if (CUresult r = prepare(); r != CUDA_SUCCESS) return fail(stream, r, false, holds);
    auto* to = static_cast<char*>(dst);
    const auto* from = static_cast<const char*>(src);
    if (!src_host) return from_device_in_order(stream, to, from, size, holds);
    if (!idle) return to_device_in_order(stream, to, from, size, holds);
    // At once, the calling thread reads the source itself: once the call returns, nothing
    // touches it (what is still queued reads the staging buffers).
    const CUresult r = to_device_at_once(stream, to, from, size);
    for (hal::PointerRegistry::InFlight*& h : holds) hal::PointerRegistry::release(std::exchange(h, nullptr));
    return r;
}

CUresult PageableCopier::to_device_at_once(CUstream stream, char* dst, const char* src, size_t size) {
    // The stream is idle: both buffers are free. Before refilling a buffer, wait for the DMA
    // that reads it (two chunks back): a wait on this copy alone, which depends on nothing
    // else, so it always ends.
    const size_t chunk = chunk_for(size);
    unsigned i = 0;
    for (size_t off = 0; off < size; off += chunk, ++i) {
        const unsigned b = i & 1;
        const size_t n = std::min(chunk, size - off);
        if (i >= 2)
            if (CUresult r = api_.cuEventSynchronize(drained_[b]); r != CUDA_SUCCESS) return r;
        std::memcpy(stage(b), src + off, n);
        if (CUresult r = api_.cuMemcpyAsync(address(dst + off), address(stage(b)), n, stream); r != CUDA_SUCCESS)
            return r;
        if (CUresult r = api_.cuEventRecord(drained_[b], stream); r != CUDA_SUCCESS) return r;
    }
    return CUDA_SUCCESS;
}

CUresult PageableCopier::to_device_in_order(CUstream stream, char* dst, const char* src, size_t size, Holds& holds) {
    // The side stream fills buffer b once the queue's stream reached this copy (earlier
    // commands may write the source, or still read the buffers) and once the DMA of the
    // chunk two back has drained b; the queue's stream DMAs each chunk once it is staged.
    CUresult r = api_.cuEventRecord(start_, stream);
    if (r == CUDA_SUCCESS) r = api_.cuStreamWaitEvent(side_, start_, 0);
    const size_t chunk = chunk_for(size);
    unsigned i = 0;
    for (size_t off = 0; off < size && r == CUDA_SUCCESS; off += chunk, ++i) {
        const unsigned b = i & 1;
        const size_t n = std::min(chunk, size - off);
        if (i >= 2) r = api_.cuStreamWaitEvent(side_, drained_[b], 0);
        Holds* last = off + n == size ? &holds : nullptr;  // the last host function takes them
        if (r == CUDA_SUCCESS) r = host_task(side_, stage(b), src + off, n, nullptr, 0, last);
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(staged_[b], side_);
        if (r == CUDA_SUCCESS) r = api_.cuStreamWaitEvent(stream, staged_[b], 0);
        if (r == CUDA_SUCCESS) r = api_.cuMemcpyAsync(address(dst + off), address(stage(b)), n, stream);
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(drained_[b], stream);
    }
    return r == CUDA_SUCCESS ? r : fail(stream, r, true, holds);
}

CUresult PageableCopier::from_device_in_order(CUstream stream, char* dst, const char* src, size_t size, Holds& holds) {
    // The queue's stream DMAs chunk i into buffer b once the side stream has emptied b (the
    // chunk two back); the side stream copies each chunk out once it landed. The command
    // ends when the last chunk is out: the queue's stream waits for it.
    const size_t chunk = chunk_for(size);
    CUresult r = CUDA_SUCCESS;
    unsigned i = 0;
    unsigned last = 0;
    for (size_t off = 0; off < size && r == CUDA_SUCCESS; off += chunk, ++i) {
        const unsigned b = last = i & 1;
        const size_t n = std::min(chunk, size - off);
        if (i >= 2) r = api_.cuStreamWaitEvent(stream, drained_[b], 0);
        if (r == CUDA_SUCCESS) r = api_.cuMemcpyAsync(address(stage(b)), address(src + off), n, stream);
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(staged_[b], stream);
        if (r == CUDA_SUCCESS) r = api_.cuStreamWaitEvent(side_, staged_[b], 0);
        Holds* last_task = off + n == size ? &holds : nullptr;  // the last host function takes them
        if (r == CUDA_SUCCESS) r = host_task(side_, dst + off, stage(b), n, nullptr, 0, last_task);
        if (r == CUDA_SUCCESS) r = api_.cuEventRecord(drained_[b], side_);
    }
    if (r == CUDA_SUCCESS) r = api_.cuStreamWaitEvent(stream, drained_[last], 0);
    return r == CUDA_SUCCESS ? r : fail(stream, r, true, holds);
}

CUresult PageableCopier::fill(CUstream stream, void* dst, const uint8_t* pattern, size_t pattern_size, size_t size,
                              Holds& holds) {
    const CUresult r = host_task(stream, dst, nullptr, size, pattern, pattern_size, &holds);
    return r == CUDA_SUCCESS ? r : fail(stream, r, false, holds);
}

}  // namespace zehal::cuda
