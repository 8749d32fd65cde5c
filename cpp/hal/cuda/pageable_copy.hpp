// Copies and fills that touch host memory of another backend (contract §2.2). To CUDA that
// memory is pageable: it is never handed to the copy engines, only touched by the CPU, in
// host functions that run in stream order (so waits, signals and timestamps around them
// hold as for any command), through a pinned staging buffer when the other side is device
// memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hal/cuda/driver_api.hpp"
#include "hal/pointer_registry.hpp"

namespace zehal::cuda {

// One queue's staging buffer and the commands that use it. Not thread-safe: the queue
// calls it under its own lock, with its device's context current.
class PageableCopier {
public:
    // Bytes of the staging buffer: a larger copy goes through it in pieces.
    static constexpr size_t kStagingBytes = size_t{4} << 20;

    explicit PageableCopier(const DriverApi& api) noexcept : api_(api) {}
    // Releases the staging buffer (see release()).
    ~PageableCopier() { release(); }
    PageableCopier(const PageableCopier&) = delete;
    PageableCopier& operator=(const PageableCopier&) = delete;

    // Holds on the host memory a command touches (hal::PointerRegistry::hold_range): the
    // last host function of the command releases them once it has run, so that memory is
    // not freed before. Null entries hold nothing.
    using Holds = hal::PointerRegistry::InFlight* [2];

    // Enqueues the copy of `size` bytes from `src` to `dst` on `stream`. `dst_host` and
    // `src_host` say which operands are host memory (of any backend): the CPU copies
    // between two of them; device or shared memory goes through the staging buffer. Takes
    // over `holds` (nulled): released by the last host function, or on failure once the
    // stream has run what was enqueued.
    CUresult copy(CUstream stream, void* dst, bool dst_host, const void* src, bool src_host, size_t size,
                  Holds& holds);
    // Enqueues a fill of `size` bytes at host memory `dst` with `pattern` repeated
    // (`pattern_size` a power of two up to 128 dividing `size`); `holds` as for copy().
    CUresult fill(CUstream stream, void* dst, const uint8_t* pattern, size_t pattern_size, size_t size,
                  Holds& holds);
    // True once a staging buffer exists (its queue then synchronizes before freeing it).
    bool staging_in_use() const noexcept { return staging_ != nullptr; }
    // Frees the staging buffer, with the device's context current; the stream must have
    // finished every command (the queue synchronizes it first).
    void release() noexcept;

private:
    // Enqueues a host function copying `size` bytes, or filling them when `pattern_size`
    // is not 0; with `holds`, it takes them over on success (nulled) and releases them once
    // it has run.
    CUresult host_task(CUstream stream, void* dst, const void* src, size_t size, const uint8_t* pattern,
                       size_t pattern_size, Holds* holds);
    // After `r`, a failure once `enqueued` commands may be on the stream: waits for the
    // stream when so, then releases what `holds` still holds. Returns r.
    CUresult fail(CUstream stream, CUresult r, bool enqueued, Holds& holds) noexcept;
    // The staging buffer, allocated on first use.
    CUresult staging(char** out);

    const DriverApi& api_;
    char* staging_ = nullptr;  // pinned, kStagingBytes
};

}  // namespace zehal::cuda
