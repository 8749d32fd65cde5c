// Copies and fills that touch pageable memory: host memory of another backend, and system
// memory (malloc, the stack, a NumPy array; contract §2.2). The copy engines never see it:
// the CPU copies it into or out of pinned staging buffers, in chunks, two buffers in turn,
// so that the CPU copy of one chunk overlaps the DMA of the one before.
//
// Two ways, one result:
// - Stream order (always valid): the CPU copies run in host functions on a side stream of
//   the queue, tied to the queue's stream by events, so waits, signals and timestamps
//   around the command hold as for any command.
// - At once (a host-to-device copy on an idle stream, with nothing to wait for, as the
//   driver's own cuMemcpyHtoDAsync from pageable memory does): the calling thread copies
//   each chunk itself and enqueues its DMA, waiting only for the DMA of the chunk two
//   before it (never for anything outside the copy). No host function, no callback thread.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hal/cuda/driver_api.hpp"
#include "hal/pointer_registry.hpp"

namespace zehal::cuda {

// One queue's staging buffers, side stream and events. Not thread-safe: the queue calls it
// under its own lock, with its device's context current.
class PageableCopier {
public:
    // Largest chunk by default (bytes of each of the two staging buffers).
    static constexpr size_t kDefaultChunkBytes = size_t{4} << 20;
    // Smallest chunk: a copy is cut in about four chunks, none smaller than this.
    static constexpr size_t kMinChunkBytes = size_t{64} << 10;

    // `chunk_bytes` 0: ZEHAL_CUDA_STAGING_CHUNK_BYTES when set (a power of two from
    // kMinChunkBytes to 256 MiB), else kDefaultChunkBytes.
    explicit PageableCopier(const DriverApi& api, size_t chunk_bytes = 0) noexcept;
    // Releases what it made (see release()).
    ~PageableCopier() { release(); }
    PageableCopier(const PageableCopier&) = delete;
    PageableCopier& operator=(const PageableCopier&) = delete;

    // Holds on the host memory a command touches (hal::PointerRegistry::hold_range): the
    // last host function of the command releases them once it has run (a copy at once:
    // when the call returns, the source read), so that memory is not freed before. Null
    // entries hold nothing.
    using Holds = hal::PointerRegistry::InFlight* [2];

    // Enqueues the copy of `size` bytes from `src` to `dst` on `stream`. `dst_host` and
    // `src_host` say which operands are host memory (of any kind): the CPU copies between
    // two of them; device or shared memory goes through the staging buffers. `idle`: the
    // stream has nothing queued and the command waits for nothing, so a host-to-device
    // copy may run at once from the calling thread. Takes over `holds` (nulled): released
    // as said above, or on failure once what was enqueued has run.
    CUresult copy(CUstream stream, void* dst, bool dst_host, const void* src, bool src_host, size_t size, bool idle,
                  Holds& holds);
    // Enqueues a fill of `size` bytes at host memory `dst` with `pattern` repeated
    // (`pattern_size` a power of two up to 128 dividing `size`); `holds` as for copy().
    CUresult fill(CUstream stream, void* dst, const uint8_t* pattern, size_t pattern_size, size_t size, Holds& holds);
    // True once staging buffers, side stream or events exist (the queue then synchronizes
    // its stream before release()).
    bool in_use() const noexcept { return staging_ != nullptr || side_ != nullptr; }
    // Frees what it made, with the device's context current; the stream must have finished
    // every command (the queue synchronizes it first).
    void release() noexcept;
    // The largest chunk.
    size_t chunk_bytes() const noexcept { return chunk_bytes_; }

private:
    // The chunk for a copy of `size` bytes: about a quarter of it, a power of two, from
    // kMinChunkBytes to chunk_bytes_.
    size_t chunk_for(size_t size) const noexcept;
    // Makes the staging buffers, side stream and events on first use.
    CUresult prepare();
    // Enqueues on `stream` a host function copying `size` bytes, or filling them when
    // `pattern_size` is not 0; with `holds`, it takes them over on success (nulled) and
    // releases them once it has run.
    CUresult host_task(CUstream stream, void* dst, const void* src, size_t size, const uint8_t* pattern,
                       size_t pattern_size, Holds* holds);
    // After `r`, a failure once `enqueued` commands may be on `stream` and the side stream:
    // waits for them when so, then releases what `holds` still holds. Returns r.
    CUresult fail(CUstream stream, CUresult r, bool enqueued, Holds& holds) noexcept;
    // The three ways of a staged copy; the last host function takes over `holds`.
    CUresult to_device_at_once(CUstream stream, char* dst, const char* src, size_t size);
    CUresult to_device_in_order(CUstream stream, char* dst, const char* src, size_t size, Holds& holds);
    CUresult from_device_in_order(CUstream stream, char* dst, const char* src, size_t size, Holds& holds);
    // Staging buffer `b` (0 or 1).
    char* stage(unsigned b) const noexcept { return staging_ + b * chunk_bytes_; }

    const DriverApi& api_;
    const size_t chunk_bytes_;
    char* staging_ = nullptr;  // pinned, 2 x chunk_bytes_
    CUstream side_ = nullptr;  // runs the host functions of staged copies
    CUevent start_ = nullptr;  // the queue's stream reached a staged copy
    CUevent staged_[2] = {};   // buffer b filled (host to device) or written (device to host)
    CUevent drained_[2] = {};  // buffer b free again
};

}  // namespace zehal::cuda
