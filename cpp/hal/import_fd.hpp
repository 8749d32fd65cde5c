// What an fd must be for its memory to be imported (contract §11): memory whose size
// cannot shrink under the mapping, or a later truncation turns every access into SIGBUS.
#pragma once

#include <cstdint>

#include "zehal/ze_result.h"

namespace zehal::hal {

// SUCCESS, with the bytes the fd holds in *bytes, for a dma-buf or a memfd sealed against
// shrinking (F_SEAL_SHRINK); INVALID_ARGUMENT for anything else (a regular file, an
// unsealed memfd, a pipe, a closed fd).
ze_result_t check_import_fd(int fd, uint64_t* bytes) noexcept;

// Adds the seals that make a memfd importable (F_SEAL_SHRINK, then F_SEAL_SEAL so that
// nobody changes them). The memfd must have been made with MFD_ALLOW_SEALING.
bool seal_against_shrinking(int fd) noexcept;

}  // namespace zehal::hal
