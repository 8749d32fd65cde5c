// The file an IPC event pool's events live in (a memfd sealed against shrinking): a header
// that describes the pool and the clock of its exporter's device, then one EventSlot per
// event. The exporter makes it; every process that opens the pool maps the same pages.
#pragma once

#include <cstddef>
#include <cstdint>

#include "zehal/ze_result.h"
#include "hal/event_slot.hpp"
#include "hal/timestamps.hpp"

namespace zehal::hal {

// The header at the file's start. Plain numbers: read alike by every process.
struct IpcPoolHeader {
    uint32_t magic = 0;                        // kIpcPoolMagic
    uint32_t layout = 0;                       // kIpcPoolLayout: this header and EventSlot as laid out here
    uint32_t count = 0;                        // events
    uint32_t flags = 0;                        // EventPoolFlag bits of the pool
    uint32_t packets = 0;                      // packets each slot holds (0 for a pool without timestamps)
    uint32_t max_packets = 0;                  // of the exporter's device (EventDomain::Params)
    uint32_t kernel_timestamp_valid_bits = 0;  // of the exporter's device
    uint32_t timestamp_flags = 0;              // TimestampCapability bits of the exporter's device
    uint64_t slot_stride = 0;                  // bytes from one slot to the next
    LinearClock clock{};                       // the exporter's device clock
};

// "ZHEP" and the layout version: a file of this library's IPC event pool, as laid out here.
inline constexpr uint32_t kIpcPoolMagic = 0x5a484550u;
inline constexpr uint32_t kIpcPoolLayout = 1;
// Bytes before the first slot.
inline constexpr size_t kIpcPoolHeaderBytes = 128;
static_assert(sizeof(IpcPoolHeader) <= kIpcPoolHeaderBytes, "the header fits before the slots");

// An IPC pool file mapped into this process. Movable, not copyable; unmaps (and closes the
// fd it holds) when destroyed.
class IpcPoolFile {
public:
    IpcPoolFile() = default;
    ~IpcPoolFile();
    IpcPoolFile(IpcPoolFile&& other) noexcept;
    IpcPoolFile& operator=(IpcPoolFile&& other) noexcept;
    IpcPoolFile(const IpcPoolFile&) = delete;
    IpcPoolFile& operator=(const IpcPoolFile&) = delete;

    // A new file for `header`'s pool (its magic, layout and stride are filled in here), its
    // slots constructed for sharing; the file's fd stays open, held by the object.
    // OUT_OF_HOST_MEMORY when the system refuses the file or the mapping.
    static ze_result_t create(const IpcPoolHeader& header, IpcPoolFile* out);
    // Maps the pool file behind `fd` (the caller keeps the fd). INVALID_ARGUMENT for a file that
    // is no IPC pool file of this layout (not a sealed memfd, a wrong magic, a header that
    // does not match the file's size).
    static ze_result_t map(int fd, IpcPoolFile* out);

    const IpcPoolHeader& header() const noexcept { return *static_cast<const IpcPoolHeader*>(base_); }
    // Slot `index` (< header().count).
    EventSlot* slot(uint32_t index) const noexcept;
    // The file's fd (the exporter's; -1 in a process that mapped it) and its size.
    int fd() const noexcept { return fd_; }
    size_t bytes() const noexcept { return bytes_; }

private:
    void release() noexcept;
    int fd_ = -1;
    void* base_ = nullptr;
    size_t bytes_ = 0;
};

}  // namespace zehal::hal
