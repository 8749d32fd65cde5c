#include "ipc_handle.hpp"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

namespace zehal::ze_driver {
namespace {

// The file `fd` is open on, if it is open.
bool identify(int fd, uint64_t* dev, uint64_t* ino) {
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) return false;
    *dev = static_cast<uint64_t>(st.st_dev);
    *ino = static_cast<uint64_t>(st.st_ino);
    return true;
}

// pidfd_open and pidfd_getfd through syscall(): glibc's wrappers are recent (2.36).
int pidfd_open_process(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int pidfd_take_fd(int pidfd, int target) { return static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, target, 0)); }

// The exporter's fd `h.fd`, duplicated into this process; the error when it cannot be taken.
ze_result_t take_exporter_fd(const IpcFile& h, int* out) {
    const int pidfd = pidfd_open_process(h.pid);
    if (pidfd < 0) return errno == EPERM ? ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const int fd = pidfd_take_fd(pidfd, h.fd);
    const int error = errno;
    close(pidfd);
    if (fd >= 0) {
        *out = fd;
        return ZE_RESULT_SUCCESS;
    }
    return error == EPERM ? ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

}  // namespace

ze_result_t make_ipc_handle(int fd, uint32_t kind, uint64_t offset, uint64_t size, IpcMemoryHandle* out) {
    IpcMemoryHandle h{};
    if (!identify(fd, &h.dev, &h.ino)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    h.fd = fd;
    h.magic = kIpcMemoryMagic;
    h.pid = static_cast<int32_t>(getpid());
    h.kind = kind;
    h.offset = offset;
    h.size = size;
    *out = h;
    return ZE_RESULT_SUCCESS;
}

ze_result_t read_ipc_handle(const ze_ipc_mem_handle_t& raw, IpcMemoryHandle* out) {
    IpcMemoryHandle h;
    std::memcpy(&h, raw.data, sizeof h);
    if (h.magic != kIpcMemoryMagic || h.zero[0] != 0 || h.zero[1] != 0 || h.fd < 0 || h.pid <= 0 || h.size == 0 ||
        h.offset >= h.size)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = h;
    return ZE_RESULT_SUCCESS;
}

ze_result_t make_ipc_handle(int fd, uint64_t size, IpcEventPoolHandle* out) {
    IpcEventPoolHandle h{};
    if (!identify(fd, &h.dev, &h.ino)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    h.fd = fd;
    h.magic = kIpcEventPoolMagic;
    h.pid = static_cast<int32_t>(getpid());
    h.size = size;
    *out = h;
    return ZE_RESULT_SUCCESS;
}

ze_result_t read_ipc_handle(const ze_ipc_event_pool_handle_t& raw, IpcEventPoolHandle* out) {
    IpcEventPoolHandle h;
    std::memcpy(&h, raw.data, sizeof h);
    if (h.magic != kIpcEventPoolMagic || h.zero0 != 0 || h.zero[0] != 0 || h.zero[1] != 0 || h.zero[2] != 0 ||
        h.fd < 0 || h.pid <= 0 || h.size == 0)
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *out = h;
    return ZE_RESULT_SUCCESS;
}

bool is_ipc_file(int fd, const IpcFile& h) {
    uint64_t dev = 0;
    uint64_t ino = 0;
    return identify(fd, &dev, &ino) && dev == h.dev && ino == h.ino;
}

ze_result_t open_ipc_file(const IpcFile& h, int* fd) {
    int own = -1;
    if (is_ipc_file(h.fd, h)) {
        own = fcntl(h.fd, F_DUPFD_CLOEXEC, 0);
        if (own < 0) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    } else if (h.pid == static_cast<int32_t>(getpid())) {
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // this process's handle, whose file is gone
    } else if (ze_result_t r = take_exporter_fd(h, &own); r != ZE_RESULT_SUCCESS) {
        return r;
    }
    if (!is_ipc_file(own, h)) {  // the exporter's fd number now names another file
        close(own);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    *fd = own;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::ze_driver
