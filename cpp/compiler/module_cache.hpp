// The cache of compiled kernels: in memory for the process, and on disk in
// $ZEHAL_CACHE_DIR, else $XDG_CACHE_HOME/zehal/kernels, else ~/.cache/zehal/kernels. Entries
// are written atomically (a temporary file renamed); an entry that is corrupt, truncated
// or of another key is ignored (and replaced by the next store); a directory that cannot
// be created or written leaves only the memory cache, without error.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace zehal::compiler {

// A cache key: a hash of what the entry was built from and for.
using CacheKey = std::array<uint8_t, 32>;

// The key of `digest` (a program's) built for `target` (e.g. "ptx-sm_80").
CacheKey cache_key(const std::array<uint8_t, 32>& digest, std::string_view target);

// The entry of kind `kind` ("bc", "host", "ptx": the file extension) for `key`, from
// memory, else from disk (then kept in memory); null when there is none.
std::shared_ptr<const std::string> cache_find(std::string_view kind, const CacheKey& key);

// Keeps `bytes` as the entry of `kind` for `key`, in memory and on disk.
void cache_store(std::string_view kind, const CacheKey& key, std::string bytes);

// The disk cache's directory now ("" when none can be named).
std::string cache_directory();

// Forgets the memory cache (entries on disk stay): for tests of the disk cache.
void clear_memory_cache();

}  // namespace zehal::compiler
