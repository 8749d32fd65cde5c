// Number of file descriptors open in this process, for the tests that check no fd leaks.
#pragma once

#include <dirent.h>

#include <cstddef>

namespace zehal::test {

inline size_t open_fds() {
    size_t n = 0;
    DIR* dir = opendir("/proc/self/fd");
    if (!dir) return 0;
    while (readdir(dir)) ++n;
    closedir(dir);
    return n;
}

}  // namespace zehal::test
