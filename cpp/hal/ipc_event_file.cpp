#include "hal/ipc_event_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <new>
#include <utility>

#include "hal/import_fd.hpp"

namespace zehal::hal {

namespace {

// Bytes of a file holding `count` slots of `stride` bytes; 0 when that overflows.
size_t file_bytes(uint32_t count, uint64_t stride) {
    if (stride == 0 || stride > (SIZE_MAX - kIpcPoolHeaderBytes) / (count ? count : 1)) return 0;
    return kIpcPoolHeaderBytes + count * static_cast<size_t>(stride);
}

// True when `h` describes a pool of this layout that fills exactly `bytes`.
bool describes(const IpcPoolHeader& h, uint64_t bytes) {
    const bool timestamps = h.flags & (kPoolKernelTimestamp | kPoolKernelMappedTimestamp);
    return h.magic == kIpcPoolMagic && h.layout == kIpcPoolLayout && h.count != 0 &&
           (h.flags & ~kPoolValidFlags) == 0 && (h.flags & kPoolIpc) && h.max_packets != 0 &&
           h.packets == (timestamps ? h.max_packets : 0u) && h.slot_stride == event_slot_stride(h.packets) &&
           h.clock.hz != 0 && file_bytes(h.count, h.slot_stride) == bytes;
}

}  // namespace

IpcPoolFile::~IpcPoolFile() { release(); }

IpcPoolFile::IpcPoolFile(IpcPoolFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      base_(std::exchange(other.base_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)) {}

IpcPoolFile& IpcPoolFile::operator=(IpcPoolFile&& other) noexcept {
    if (this != &other) {
        release();
        fd_ = std::exchange(other.fd_, -1);
        base_ = std::exchange(other.base_, nullptr);
        bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
}

void IpcPoolFile::release() noexcept {
    if (base_) munmap(base_, bytes_);
    if (fd_ >= 0) close(fd_);
    base_ = nullptr;
    fd_ = -1;
}

EventSlot* IpcPoolFile::slot(uint32_t index) const noexcept {
    auto* first = static_cast<unsigned char*>(base_) + kIpcPoolHeaderBytes;
    return std::launder(reinterpret_cast<EventSlot*>(first + index * static_cast<size_t>(header().slot_stride)));
}

ze_result_t IpcPoolFile::create(const IpcPoolHeader& header, IpcPoolFile* out) {
    IpcPoolHeader h = header;
    h.magic = kIpcPoolMagic;
    h.layout = kIpcPoolLayout;
    h.slot_stride = event_slot_stride(h.packets);
    const size_t bytes = file_bytes(h.count, h.slot_stride);
    if (bytes == 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    IpcPoolFile file;
    file.fd_ = memfd_create("zehal-ipc-event-pool", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (file.fd_ < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    // Sealed against shrinking: no process's mapping can lose its pages.
    if (ftruncate(file.fd_, static_cast<off_t>(bytes)) != 0 || !seal_against_shrinking(file.fd_))
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd_, 0);
    if (base == MAP_FAILED) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    file.base_ = base;
    file.bytes_ = bytes;
    new (base) IpcPoolHeader(h);
    for (uint32_t i = 0; i < h.count; ++i) {
        auto* at = static_cast<unsigned char*>(base) + kIpcPoolHeaderBytes + i * static_cast<size_t>(h.slot_stride);
        new (at) EventSlot(true);
    }
    *out = std::move(file);
    return ZE_RESULT_SUCCESS;
}

ze_result_t IpcPoolFile::map(int fd, IpcPoolFile* out) {
    uint64_t bytes = 0;
    if (check_import_fd(fd, &bytes) != ZE_RESULT_SUCCESS || bytes < kIpcPoolHeaderBytes || bytes > SIZE_MAX)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    void* base = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    IpcPoolFile file;
    file.base_ = base;
    file.bytes_ = static_cast<size_t>(bytes);
    if (!describes(file.header(), bytes)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = std::move(file);
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::hal
