// The bytes of an IPC memory handle (ze_ipc_mem_handle_t) and of an IPC event pool handle
// (ze_ipc_event_pool_handle_t), and how a process that holds one reaches the file it names:
// the exporter's fd, taken with pidfd_getfd or received over a socket (docs/ze_driver.md,
// "IPC memory handles", "IPC event pool handles").
#pragma once

#include <cstdint>

#include <level_zero/ze_api.h>

namespace zehal::ze_driver {

// The layout of the 64 bytes of a ze_ipc_mem_handle_t made by this driver. The fd comes
// first, as in Intel's driver: programs that pass the handle over a UNIX socket send those
// four bytes as an fd (SCM_RIGHTS) and write the number received in their place.
struct IpcMemoryHandle {
    int32_t fd;        // the file holding the memory: the exporter's fd, or the receiver's
    uint32_t magic;    // kIpcMemoryMagic: a handle of this driver, of this layout
    int32_t pid;       // the exporting process
    uint32_t kind;     // hal::MemoryKind of the exported allocation
    uint64_t dev;      // st_dev of the file: tells the file from another under the same fd number
    uint64_t ino;      // st_ino of the file
    uint64_t offset;   // the exported pointer's offset in its allocation (and in the file)
    uint64_t size;     // bytes of the allocation, mapped from the file's start
    uint64_t zero[2];  // 0
};
static_assert(sizeof(IpcMemoryHandle) == ZE_MAX_IPC_HANDLE_SIZE, "a handle fills ze_ipc_mem_handle_t");

// "ZHIP": the magic of every memory handle this driver makes.
inline constexpr uint32_t kIpcMemoryMagic = 0x5a484950u;

// The layout of the 64 bytes of a ze_ipc_event_pool_handle_t made by this driver: the fd
// first, as in a memory handle (a socket carries it the same way). What the pool is (its
// events, flags, the exporter's device clock) is written in the file itself.
struct IpcEventPoolHandle {
    int32_t fd;        // the pool's file: the exporter's fd, or the receiver's
    uint32_t magic;    // kIpcEventPoolMagic
    int32_t pid;       // the exporting process
    uint32_t zero0;    // 0
    uint64_t dev;      // st_dev of the file
    uint64_t ino;      // st_ino of the file
    uint64_t size;     // bytes of the file
    uint64_t zero[3];  // 0
};
static_assert(sizeof(IpcEventPoolHandle) == ZE_MAX_IPC_HANDLE_SIZE, "a handle fills ze_ipc_event_pool_handle_t");

// "ZHIE": the magic of every event pool handle this driver makes.
inline constexpr uint32_t kIpcEventPoolMagic = 0x5a484945u;

// Where a file of an exporting process is: what opening any handle needs.
struct IpcFile {
    int32_t fd;   // the exporter's number for it (or the receiver's)
    int32_t pid;  // the exporter
    uint64_t dev;
    uint64_t ino;
};

// A handle of this process for `size` bytes of memory kind `kind` in file `fd`, naming the
// byte at `offset`. INVALID_ARGUMENT when `fd` is no open file.
ze_result_t make_ipc_handle(int fd, uint32_t kind, uint64_t offset, uint64_t size, IpcMemoryHandle* out);

// Reads `raw` into *out: INVALID_ARGUMENT for bytes that are no handle of this driver (wrong
// magic, an offset outside the allocation, reserved bytes set, an empty allocation).
ze_result_t read_ipc_handle(const ze_ipc_mem_handle_t& raw, IpcMemoryHandle* out);

// A handle of this process for the event pool file `fd` of `size` bytes. INVALID_ARGUMENT
// when `fd` is no open file.
ze_result_t make_ipc_handle(int fd, uint64_t size, IpcEventPoolHandle* out);

// Reads `raw` into *out: INVALID_ARGUMENT for bytes that are no event pool handle of this
// driver (wrong magic, reserved bytes set, an empty file).
ze_result_t read_ipc_handle(const ze_ipc_event_pool_handle_t& raw, IpcEventPoolHandle* out);

// The file a handle names.
inline IpcFile file_of(const IpcMemoryHandle& h) { return {h.fd, h.pid, h.dev, h.ino}; }
inline IpcFile file_of(const IpcEventPoolHandle& h) { return {h.fd, h.pid, h.dev, h.ino}; }

// An fd of this process for file `f`, which the caller closes: the handle's own fd when it
// is that file in this process (the exporter itself, or a receiver that got the fd over a
// socket), else the exporter's, taken with pidfd_getfd. INVALID_ARGUMENT when the exporter
// is gone or no longer holds the file (freed memory, a destroyed pool, a closed handle's fd
// number now used by another file); INSUFFICIENT_PERMISSIONS when the system denies taking
// the fd (pidfd_getfd needs ptrace rights over the exporter: kernel.yama.ptrace_scope).
ze_result_t open_ipc_file(const IpcFile& f, int* fd);

// True when `fd` is open in this process and is the file `f`.
bool is_ipc_file(int fd, const IpcFile& f);

}  // namespace zehal::ze_driver
