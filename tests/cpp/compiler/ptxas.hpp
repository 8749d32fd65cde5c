// ptxas, where one is installed, to check the PTX the compiler emits: $ZEHAL_PTXAS, else
// $CUDA_HOME/bin/ptxas, else /usr/local/cuda/bin/ptxas, else PATH.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace zehal::compiler::testing {

// The ptxas to check PTX with; empty when none is found.
inline std::string find_ptxas() {
    std::vector<std::string> candidates;
    if (const char* given = std::getenv("ZEHAL_PTXAS")) {
        candidates.emplace_back(given);
    }
    if (const char* cuda = std::getenv("CUDA_HOME")) {
        candidates.push_back(std::string(cuda) + "/bin/ptxas");
    }
    candidates.emplace_back("/usr/local/cuda/bin/ptxas");
    if (const char* path = std::getenv("PATH")) {
        std::string folders = path;
        for (size_t start = 0, end = 0; start <= folders.size(); start = end + 1) {
            end = folders.find(':', start);
            end = end == std::string::npos ? folders.size() : end;
            candidates.push_back(folders.substr(start, end - start) + "/ptxas");
        }
    }
    for (const std::string& candidate : candidates) {
        if (access(candidate.c_str(), X_OK) == 0) {
            return candidate;
        }
    }
    return {};
}

// ptxas's output for `ptx` assembled for sm_<sm>; empty when it accepts the PTX.
inline std::string ptxas_errors(const std::string& ptxas, const std::string& ptx, uint32_t sm) {
    char path[] = "/tmp/zehal-ptx-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0) {
        return "cannot create a temporary file";
    }
    close(fd);
    std::ofstream(path) << ptx;
    const std::string command = "'" + ptxas + "' -arch=sm_" + std::to_string(sm) + " '" + path + "' -o /dev/null 2>&1";
    std::string output;
    int status = -1;
    if (FILE* pipe = popen(command.c_str(), "r")) {
        char chunk[512];
        while (size_t got = fread(chunk, 1, sizeof chunk, pipe)) {
            output.append(chunk, got);
        }
        status = pclose(pipe);
    }
    unlink(path);
    return status == 0 ? std::string() : "ptxas failed (" + std::to_string(status) + "): " + output;
}

}  // namespace zehal::compiler::testing
