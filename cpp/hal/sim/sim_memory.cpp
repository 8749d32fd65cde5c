#include "hal/sim/sim_memory.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>

#include "hal/import_fd.hpp"
#include "hal/sim/sim_virtual_memory.hpp"

namespace zehal::sim {

namespace {

// Up to this size (and page alignment), memory comes from the C heap: small allocations
// stay cheap. Above it, straight from mmap, so that any size the system refuses fails
// cleanly instead of tripping an allocator limit.
constexpr size_t kHeapLimit = 1u << 20;

// Granule of an exportable allocation's memfd: the sim device's virtual memory page.
constexpr size_t kExportGranule = SimVirtualMemory::kPageSize;

size_t page_size() {
    static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    return page;
}

}  // namespace

SimHostMemory::~SimHostMemory() {
    for (const hal::Allocation& a : registry.take_all()) unmap_memory(a);
}

std::shared_ptr<SimHostMemory> shared_host_memory() {
    // Function-local static: created once, thread-safely.
    static const std::shared_ptr<SimHostMemory> memory = std::make_shared<SimHostMemory>();
    return memory;
}

bool map_memory(size_t size, size_t alignment, hal::Allocation* a) {
    const size_t page = page_size();
    if (size <= kHeapLimit && alignment <= page) {
        void* p = nullptr;
        if (posix_memalign(&p, alignment < sizeof(void*) ? sizeof(void*) : alignment, size) != 0) return false;
        a->mapping = p;
        a->mapping_bytes = 0;  // 0: heap memory
        a->info.base = p;
        return true;
    }
    // mmap gives page alignment; for more, map alignment - page extra bytes and trim.
    const size_t extra = alignment > page ? alignment - page : 0;
    const size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size || rounded + extra < rounded) return false;
    const size_t total = rounded + extra;
    void* raw = mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return false;
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
    if (aligned > start) munmap(raw, aligned - start);
    const size_t tail = (start + total) - (aligned + rounded);
    if (tail) munmap(reinterpret_cast<void*>(aligned + rounded), tail);
    a->mapping = reinterpret_cast<void*>(aligned);
    a->mapping_bytes = rounded;
    a->info.base = a->mapping;
    return true;
}

bool map_exportable_memory(size_t size, size_t alignment, hal::Allocation* a) {
    const size_t page = page_size();
    const size_t rounded = (size + page - 1) & ~(page - 1);
    const size_t extra = alignment > page ? alignment - page : 0;
    if (rounded < size || rounded + extra < rounded) return false;
    // The file holds whole pages of the device's virtual memory, so that it also imports as
    // physical memory; its pages past the mapping stay untouched, costing nothing.
    const size_t file_bytes = (rounded + kExportGranule - 1) & ~(kExportGranule - 1);
    if (file_bytes < rounded) return false;
    const int fd = memfd_create("zehal-sim-exportable", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return false;
    if (ftruncate(fd, static_cast<off_t>(file_bytes)) != 0 || !hal::seal_against_shrinking(fd)) {
        close(fd);
        return false;
    }
    // Reserve room for the alignment, map the memfd over its aligned start, give back the rest.
    void* raw = mmap(nullptr, rounded + extra, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (raw == MAP_FAILED) {
        close(fd);
        return false;
    }
    const uintptr_t start = reinterpret_cast<uintptr_t>(raw);
    const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
    void* p = mmap(reinterpret_cast<void*>(aligned), rounded, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    if (p == MAP_FAILED) {
        munmap(raw, rounded + extra);
        close(fd);
        return false;
    }
    if (aligned > start) munmap(raw, aligned - start);
    const size_t tail = (start + rounded + extra) - (aligned + rounded);
    if (tail) munmap(reinterpret_cast<void*>(aligned + rounded), tail);
    a->mapping = p;
    a->mapping_bytes = rounded;
    a->info.base = p;
    a->export_fd = fd;
    return true;
}

void unmap_memory(const hal::Allocation& a) {
    if (a.mapping_bytes == 0)
        std::free(a.mapping);
    else
        munmap(a.mapping, a.mapping_bytes);
    if (a.export_fd >= 0) close(a.export_fd);
}

bool map_file(int fd, size_t size, hal::Allocation* a) {
    const size_t page = page_size();
    const size_t rounded = (size + page - 1) & ~(page - 1);
    if (rounded < size) return false;
    void* p = mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return false;
    a->mapping = p;
    a->mapping_bytes = rounded;
    a->info.base = p;
    return true;
}

}  // namespace zehal::sim
