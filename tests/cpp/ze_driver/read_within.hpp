// Reading a child process's pipe in the driver's two-process tests, bounded in time.
#pragma once

#include <poll.h>
#include <unistd.h>

#include <cstddef>

namespace zetest {

// Reads exactly `size` bytes from `fd` within a minute; false on a timeout, an error or EOF.
inline bool read_within_a_minute(int fd, void* out, size_t size) {
    auto* p = static_cast<char*>(out);
    while (size > 0) {
        pollfd pfd{fd, POLLIN, 0};
        if (poll(&pfd, 1, 60000) != 1) return false;
        const ssize_t n = ::read(fd, p, size);
        if (n <= 0) return false;
        p += n;
        size -= static_cast<size_t>(n);
    }
    return true;
}

}  // namespace zetest
