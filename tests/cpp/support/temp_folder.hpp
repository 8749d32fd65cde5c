// A new folder under /tmp that is removed, with everything in it, when the object goes.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace zehal::test {

class TempFolder {
public:
    // /tmp/<prefix>-XXXXXX; an empty path() when the folder could not be made.
    explicit TempFolder(const std::string& prefix) : owner_(getpid()) {
        std::string pattern = "/tmp/" + prefix + "-XXXXXX";
        if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    }
    // Only the process that made it removes it: a forked child that exits normally leaves
    // its parent's folder alone.
    ~TempFolder() {
        std::error_code ignored;
        if (!path_.empty() && getpid() == owner_) std::filesystem::remove_all(path_, ignored);
    }
    TempFolder(const TempFolder&) = delete;
    TempFolder& operator=(const TempFolder&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }

private:
    std::filesystem::path path_;
    const pid_t owner_;
};

}  // namespace zehal::test
