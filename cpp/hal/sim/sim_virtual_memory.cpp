#include "hal/sim/sim_virtual_memory.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <new>

#include "hal/import_fd.hpp"
#include "hal/sim/sim_device.hpp"

namespace zehal::sim {

namespace {

uintptr_t address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

// Inaccessible address space, reserving no memory.
constexpr int kReservedFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;

int protection(hal::MemoryAccess access) {
    switch (access) {
        case hal::MemoryAccess::read_write:
            return PROT_READ | PROT_WRITE;
        case hal::MemoryAccess::read_only:
            return PROT_READ;
        case hal::MemoryAccess::none:
            break;
    }
    return PROT_NONE;
}

// Physical memory: the pages of a memfd (or of an imported fd, its own copy). Device memory is
// given back to its device's budget when the last reference goes (the device may be gone by
// then; imported memory has no device to give back to).
class SimPhysicalMemory final : public hal::PhysicalMemory {
public:
    SimPhysicalMemory(hal::MemoryKind kind, size_t size, int fd, std::weak_ptr<SimDevice> device) noexcept
        : PhysicalMemory(kind, size),
          fd_(fd),
          device_(std::move(device)) {}
    ~SimPhysicalMemory() override {
        close(fd_);
        if (kind() != hal::MemoryKind::device) return;
        if (auto device = device_.lock()) device->unreserve(size());
    }
    int fd() const noexcept { return fd_; }
    // Sealed against shrinking where made here (do_create_physical); an import's copy is the
    // importer's fd, checked importable when it came in.
    int file() const noexcept override { return fd_; }

private:
    const int fd_;
    const std::weak_ptr<SimDevice> device_;
};

}  // namespace

SimVirtualMemory::~SimVirtualMemory() { release_all(); }

size_t SimVirtualMemory::do_page_size(size_t size) const noexcept {
    return size >= kLargePageSize ? kLargePageSize : kPageSize;
}

ze_result_t SimVirtualMemory::do_reserve(const void* hint, size_t size, size_t alignment, void** out) {
    if (hint && address(hint) % alignment == 0) {
        void* p = mmap(const_cast<void*>(hint), size, PROT_NONE, kReservedFlags | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == hint) {
            *out = p;
            return ZE_RESULT_SUCCESS;
        }
        // Taken, or placed elsewhere by a kernel without MAP_FIXED_NOREPLACE: anywhere, then.
        if (p != MAP_FAILED) munmap(p, size);
    }
    // Over-reserve by the alignment, then trim both ends.
    const size_t total = size + alignment;
    if (total < size) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    void* raw = mmap(nullptr, total, PROT_NONE, kReservedFlags, -1, 0);
    if (raw == MAP_FAILED) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    const uintptr_t start = address(raw);
    const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
    if (aligned > start) munmap(raw, aligned - start);
    const size_t tail = start + total - (aligned + size);
    if (tail) munmap(reinterpret_cast<void*>(aligned + size), tail);
    *out = reinterpret_cast<void*>(aligned);
    return ZE_RESULT_SUCCESS;
}

void SimVirtualMemory::do_free(void* base, size_t size) noexcept { munmap(base, size); }

ze_result_t SimVirtualMemory::do_create_physical(hal::MemoryKind kind, size_t size,
                                                 std::shared_ptr<hal::PhysicalMemory>* out) {
    const bool on_device = kind == hal::MemoryKind::device;
    const ze_result_t out_of_memory = on_device ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
                                                : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    if (!device_.count_allocation()) return out_of_memory;
    if (on_device && !device_.reserve(size)) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    // Sealed against shrinking, so that another process may map it (an IPC handle, contract §11).
    const int fd = memfd_create(on_device ? "zehal-sim-physical-device" : "zehal-sim-physical-host",
                                MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0 || ftruncate(fd, static_cast<off_t>(size)) != 0 || !hal::seal_against_shrinking(fd)) {
        if (fd >= 0) close(fd);
        if (on_device) device_.unreserve(size);
        return out_of_memory;
    }
    try {
        *out = std::make_shared<SimPhysicalMemory>(kind, size, fd,
                                                   std::static_pointer_cast<SimDevice>(device_.shared_from_this()));
    } catch (const std::bad_alloc&) {
        close(fd);
        if (on_device) device_.unreserve(size);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimVirtualMemory::do_import_physical(int fd, size_t size, std::shared_ptr<hal::PhysicalMemory>* out) {
    // A copy of the caller's fd, the physical memory's own; no device to give memory back to.
    const int own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (own < 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    try {
        *out = std::make_shared<SimPhysicalMemory>(hal::MemoryKind::device, size, own, std::weak_ptr<SimDevice>{});
    } catch (const std::bad_alloc&) {
        close(own);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimVirtualMemory::do_map(void* ptr, size_t size, hal::PhysicalMemory& physical, size_t offset,
                                     hal::MemoryAccess access) {
    const int fd = static_cast<SimPhysicalMemory&>(physical).fd();
    if (mmap(ptr, size, protection(access), MAP_SHARED | MAP_FIXED, fd, static_cast<off_t>(offset)) == MAP_FAILED)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimVirtualMemory::do_unmap(void* ptr, size_t size) noexcept {
    // Reserved space again (the pages stay with their memfd).
    if (mmap(ptr, size, PROT_NONE, kReservedFlags | MAP_FIXED, -1, 0) == MAP_FAILED)
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    return ZE_RESULT_SUCCESS;
}

ze_result_t SimVirtualMemory::do_protect(void* ptr, size_t size, hal::PhysicalMemory& /*physical*/,
                                         hal::MemoryAccess access) {
    return mprotect(ptr, size, protection(access)) == 0 ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
}

bool SimVirtualMemory::do_lost() const noexcept { return device_.lost(); }

}  // namespace zehal::sim
