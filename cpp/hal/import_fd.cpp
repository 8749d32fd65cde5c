#include "hal/import_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace zehal::hal {

namespace {
// f_type of the dma-buf file system (linux/magic.h).
constexpr unsigned long kDmaBufMagic = 0x444d4142;
}  // namespace

ze_result_t check_import_fd(int fd, uint64_t* bytes) noexcept {
    if (fd < 0 || !bytes) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct statfs fs {};
    if (fstatfs(fd, &fs) != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (static_cast<unsigned long>(fs.f_type) == kDmaBufMagic) {
        // A dma-buf keeps its size for its whole life; it reports it through lseek.
        const off_t end = lseek(fd, 0, SEEK_END);
        if (end <= 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        *bytes = static_cast<uint64_t>(end);
        return ZE_RESULT_SUCCESS;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    const int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || !(seals & F_SEAL_SHRINK)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    *bytes = static_cast<uint64_t>(st.st_size);
    return ZE_RESULT_SUCCESS;
}

bool seal_against_shrinking(int fd) noexcept { return fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_SEAL) == 0; }

}  // namespace zehal::hal
