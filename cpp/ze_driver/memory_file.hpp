// The file that holds a piece of zehal's memory, which another process may map: what an IPC
// memory handle and an allocation's export fd name.
#pragma once

#include <cstdint>
#include <memory>

#include "objects.hpp"

namespace zehal::ze_driver {

// A file holding memory, and where in it.
struct MemoryFile {
    int fd = -1;          // owned by the memory (an allocation, physical memory): not the caller's
    uint32_t kind = 0;    // hal::MemoryKind of the memory
    uint64_t offset = 0;  // of the pointer asked about, from the file's start
    uint64_t size = 0;    // bytes a process maps from the file's start to reach all of it
    std::shared_ptr<hal::PhysicalMemory> physical;  // keeps a reserved range's file open while held
};

// The file of the memory at `ptr`, of device `owner`, which `info` describes: an allocation's
// export fd (the allocation's own), or the file of the physical memory a reserved range maps
// at `ptr`. UNSUPPORTED_FEATURE for memory with no file of its own (of a device that exports
// nothing, an import, an opened IPC handle, physical memory without a file); INVALID_ARGUMENT
// for a reserved page that maps nothing; DEVICE_LOST once the device is lost.
ze_result_t memory_file(DeviceObject* owner, const hal::PointerInfo& info, const void* ptr, MemoryFile* out);

}  // namespace zehal::ze_driver
