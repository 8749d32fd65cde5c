// The SPIR-V kernels of tests/kernels, built into ZEHAL_SPIRV_KERNEL_DIR, and a Program
// read from one of them.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "compiler/program.hpp"
#include "support/temp_folder.hpp"

namespace zehal::compiler::testing {

// Every test process builds into a disk cache of its own (a new folder under /tmp, removed
// at exit), never the user's: set once, before the first test runs.
inline const std::string& test_cache_dir() {
    static const zehal::test::TempFolder folder("zehal-kernel-cache");
    static const std::string path = [] {
        std::string p = folder.path().empty() ? "/tmp/zehal-kernel-cache" : folder.path().string();
        setenv("ZEHAL_CACHE_DIR", p.c_str(), 1);
        return p;
    }();
    return path;
}
inline const std::string& kTestCacheDir = test_cache_dir();

// The bytes of <kernel dir>/<name>.spv; empty when it cannot be read.
inline std::vector<uint8_t> spirv_file(const std::string& name) {
    std::ifstream file(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/" + name + ".spv", std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// The program of <name>.spv (test failure when it does not build).
inline std::shared_ptr<const Program> load_program(const std::string& name) {
    const std::vector<uint8_t> bytes = spirv_file(name);
    EXPECT_FALSE(bytes.empty()) << name << ".spv is missing";
    std::shared_ptr<const Program> program;
    std::string log;
    EXPECT_EQ(Program::from_spirv(bytes, "", &program, &log), ZE_RESULT_SUCCESS) << log;
    return program;
}

}  // namespace zehal::compiler::testing

// Skips a test of a build without the compiler.
#define ZEHAL_REQUIRE_COMPILER()                                                                \
    do {                                                                                        \
        if (!::zehal::compiler::available()) {                                                  \
            GTEST_SKIP() << "kernels unavailable: " << ::zehal::compiler::unavailable_reason(); \
        }                                                                                       \
    } while (0)
