// The kernel cache: a map in memory, files on disk with a header that names their key and
// a hash of their contents.
#include "module_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm/ADT/ArrayRef.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Support/SHA256.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <thread>

namespace zehal::compiler {

namespace {

constexpr std::string_view kMagic = "ZEHALKC1";
constexpr size_t kHeaderBytes = 8 + 32 + 8 + 32;  // magic, key, length, content hash

std::mutex memory_mutex;
std::map<std::string, std::shared_ptr<const std::string>> memory;  // guarded by memory_mutex

std::string hex(const CacheKey& key) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text;
    for (uint8_t byte : key) {
        text.push_back(kDigits[byte >> 4]);
        text.push_back(kDigits[byte & 15]);
    }
    return text;
}

CacheKey hash_of(std::string_view bytes) {
    llvm::SHA256 hash;
    hash.update(llvm::StringRef(bytes.data(), bytes.size()));
    return hash.final();
}

// Creates `path` and its parents (mode 0700); true when it is a directory afterwards.
bool make_directories(const std::string& path) {
    for (size_t at = 1; at <= path.size(); ++at) {
        if (at == path.size() || path[at] == '/') {
            const std::string prefix = path.substr(0, at);
            if (mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST) {
                return false;
            }
        }
    }
    struct stat info {};
    return stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::string file_of(const std::string& directory, std::string_view kind, const CacheKey& key) {
    return directory + "/" + hex(key) + "." + std::string(kind);
}

std::shared_ptr<const std::string> load_file(const std::string& path, const CacheKey& key) {
    std::ifstream file(path, std::ios::binary);
    if (!file) {
        return nullptr;
    }
    std::string data{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (data.size() < kHeaderBytes || std::string_view(data).substr(0, 8) != kMagic ||
        std::memcmp(data.data() + 8, key.data(), key.size()) != 0) {
        return nullptr;
    }
    uint64_t length = 0;
    std::memcpy(&length, data.data() + 40, sizeof(length));
    if (length != data.size() - kHeaderBytes) {
        return nullptr;
    }
    std::string content = data.substr(kHeaderBytes);
    const CacheKey content_hash = hash_of(content);
    if (std::memcmp(data.data() + 48, content_hash.data(), content_hash.size()) != 0) {
        return nullptr;
    }
    return std::make_shared<const std::string>(std::move(content));
}

void store_file(const std::string& directory, std::string_view kind, const CacheKey& key, const std::string& bytes) {
    if (directory.empty() || !make_directories(directory)) {
        return;
    }
    std::string data(kMagic);
    data.append(reinterpret_cast<const char*>(key.data()), key.size());
    const uint64_t length = bytes.size();
    data.append(reinterpret_cast<const char*>(&length), sizeof(length));
    const CacheKey content_hash = hash_of(bytes);
    data.append(reinterpret_cast<const char*>(content_hash.data()), content_hash.size());
    data.append(bytes);
    const std::string path = file_of(directory, kind, key);
    const std::string temporary = path + ".tmp." + std::to_string(getpid()) + "." +
                                  std::to_string(std::hash<std::thread::id>{}(std::this_thread::get_id()));
    const int fd = open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) {
        return;
    }
    size_t written = 0;
    while (written < data.size()) {
        const ssize_t n = write(fd, data.data() + written, data.size() - written);
        if (n <= 0) {
            break;
        }
        written += static_cast<size_t>(n);
    }
    const bool complete = written == data.size() && close(fd) == 0;
    if (!complete || rename(temporary.c_str(), path.c_str()) != 0) {
        unlink(temporary.c_str());
    }
}

}  // namespace

CacheKey cache_key(const std::array<uint8_t, 32>& digest, std::string_view target) {
    llvm::SHA256 hash;
    hash.update(llvm::ArrayRef<uint8_t>(digest.data(), digest.size()));
    hash.update(llvm::StringRef(target.data(), target.size()));
    return hash.final();
}

std::string cache_directory() {
    if (const char* dir = std::getenv("ZEHAL_CACHE_DIR"); dir != nullptr && *dir != '\0') {
        return dir;
    }
    if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg == '/') {
        return std::string(xdg) + "/zehal/kernels";
    }
    if (const char* home = std::getenv("HOME"); home != nullptr && *home == '/') {
        return std::string(home) + "/.cache/zehal/kernels";
    }
    return "";
}

std::shared_ptr<const std::string> cache_find(std::string_view kind, const CacheKey& key) {
    const std::string name = hex(key) + "." + std::string(kind);
    {
        std::lock_guard lock(memory_mutex);
        if (auto it = memory.find(name); it != memory.end()) {
            return it->second;
        }
    }
    const std::string directory = cache_directory();
    if (directory.empty()) {
        return nullptr;
    }
    auto entry = load_file(file_of(directory, kind, key), key);
    if (entry) {
        std::lock_guard lock(memory_mutex);
        memory.emplace(name, entry);
    }
    return entry;
}

void cache_store(std::string_view kind, const CacheKey& key, std::string bytes) {
    auto entry = std::make_shared<const std::string>(std::move(bytes));
    store_file(cache_directory(), kind, key, *entry);
    std::lock_guard lock(memory_mutex);
    memory[hex(key) + "." + std::string(kind)] = std::move(entry);
}

void clear_memory_cache() {
    std::lock_guard lock(memory_mutex);
    memory.clear();
}

}  // namespace zehal::compiler
