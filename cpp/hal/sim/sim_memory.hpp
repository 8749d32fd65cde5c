// Memory of the software device: fresh host pages underneath every kind (a memfd's for
// memory allocated for export), and the host memory every sim device shares.
#pragma once

#include <cstddef>
#include <memory>

#include "hal/host_memory.hpp"

namespace zehal::sim {

// Host memory of the sim backend: allocated and freed through any sim device, usable by
// every device of every backend (contract §2.2). One per process. Freeing waits until no
// lost device's engine still runs a command (HostMemoryRegistry::remove, contract §11).
struct SimHostMemory {
    hal::HostMemoryRegistry registry{"sim"};
    ~SimHostMemory();
};

// The process's sim host memory.
std::shared_ptr<SimHostMemory> shared_host_memory();

// Gets `size` bytes of fresh memory aligned to `alignment` (a power of two) into `a`
// (mapping, mapping_bytes, info.base); false when the system refuses.
bool map_memory(size_t size, size_t alignment, hal::Allocation* a);
// Gets `size` bytes aligned to `alignment` (a power of two) over the pages of a fresh memfd,
// sealed against shrinking so that importers may map it (hal/import_fd.hpp), into `a`
// (mapping, mapping_bytes, info.base, export_fd); false when the system refuses.
bool map_exportable_memory(size_t size, size_t alignment, hal::Allocation* a);
// Releases what map_memory, map_exportable_memory or map_file gave (the export fd included).
void unmap_memory(const hal::Allocation& a);
// Maps `size` bytes of file `fd` shared, read-write, into `a`; false when mmap refuses.
bool map_file(int fd, size_t size, hal::Allocation* a);

}  // namespace zehal::sim
