// The kernel cache: a hit in memory or on disk costs no compilation; corrupt entries are
// rebuilt; a directory that cannot be written leaves the memory cache.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <dirent.h>

#include <fstream>

#include "compiler/module_cache.hpp"
#include "host_launch.hpp"

namespace zehal::compiler {
namespace {

using testing::Args;
using testing::grid_1d;
using testing::spirv_file;

// Builds saxpy (program and host module) and checks one run.
void build_and_run_saxpy() {
    const auto bytes = spirv_file("saxpy");
    std::shared_ptr<const Program> program;
    std::string log;
    ASSERT_EQ(Program::from_spirv(bytes, "", &program, &log), ZE_RESULT_SUCCESS) << log;
    std::shared_ptr<const HostModule> module;
    ASSERT_EQ(HostModule::build(program, &module, &log), ZE_RESULT_SUCCESS) << log;
    std::vector<float> y(100, 1.0f), x(100, 2.0f);
    Args args;
    args.value(y.data()).value(static_cast<const float*>(x.data())).value(3.0f).value(uint32_t{90});
    std::string error;
    ASSERT_EQ(module->run(0, args.launch(), grid_1d(4, 25), &error), ZE_RESULT_SUCCESS) << error;
    EXPECT_EQ(y[0], 7.0f);
    EXPECT_EQ(y[89], 7.0f);
    EXPECT_EQ(y[90], 1.0f);
}

std::vector<std::string> files_in(const std::string& dir) {
    std::vector<std::string> names;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] != '.') {
                names.push_back(dir + "/" + e->d_name);
            }
        }
        closedir(d);
    }
    return names;
}

class Cache : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_FALSE(folder_.path().empty());
        dir_ = (folder_.path() / "nested" / "kernels").string();
        setenv("ZEHAL_CACHE_DIR", dir_.c_str(), 1);
        clear_memory_cache();
    }
    void TearDown() override {
        setenv("ZEHAL_CACHE_DIR", testing::kTestCacheDir.c_str(), 1);
        clear_memory_cache();
    }
    const test::TempFolder folder_{"zehal-cache-test"};
    std::string dir_;
};

TEST_F(Cache, HitsInMemoryAndOnDiskCostNoCompilation) {
    ZEHAL_REQUIRE_COMPILER();
    const uint64_t before = compilation_count();
    build_and_run_saxpy();
    const uint64_t built = compilation_count();
    EXPECT_EQ(built - before, 2u);  // the translation and the host object
    EXPECT_EQ(files_in(dir_).size(), 2u);
    build_and_run_saxpy();
    EXPECT_EQ(compilation_count(), built) << "memory hit";
    clear_memory_cache();
    build_and_run_saxpy();
    EXPECT_EQ(compilation_count(), built) << "disk hit";
}

TEST_F(Cache, CorruptAndTruncatedEntriesAreRebuilt) {
    ZEHAL_REQUIRE_COMPILER();
    build_and_run_saxpy();
    auto files = files_in(dir_);
    ASSERT_EQ(files.size(), 2u);
    {
        std::fstream f(files[0], std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(100);
        f.write("garbage!", 8);
    }
    truncate(files[1].c_str(), 60);
    clear_memory_cache();
    const uint64_t before = compilation_count();
    build_and_run_saxpy();
    EXPECT_EQ(compilation_count() - before, 2u);
    // Rebuilt entries replaced the bad ones.
    clear_memory_cache();
    const uint64_t rebuilt = compilation_count();
    build_and_run_saxpy();
    EXPECT_EQ(compilation_count(), rebuilt);
}

TEST_F(Cache, UnwritableDirectoryLeavesTheMemoryCache) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string file = dir_ + "-file";
    ASSERT_EQ(mkdir((dir_.substr(0, dir_.rfind('/'))).c_str(), 0700), 0);
    std::ofstream(file) << "not a directory";
    setenv("ZEHAL_CACHE_DIR", (file + "/below").c_str(), 1);
    const uint64_t before = compilation_count();
    build_and_run_saxpy();
    EXPECT_EQ(compilation_count() - before, 2u);
    build_and_run_saxpy();
    EXPECT_EQ(compilation_count() - before, 2u);
}

TEST_F(Cache, PtxIsCachedPerTarget) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = testing::load_program("saxpy");
    ASSERT_TRUE(program);
    std::string ptx, again, log;
    const uint64_t before = compilation_count();
    ASSERT_EQ(emit_ptx(*program, 80, &ptx, &log), ZE_RESULT_SUCCESS) << log;
    ASSERT_EQ(emit_ptx(*program, 80, &again, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_EQ(ptx, again);
    EXPECT_EQ(compilation_count() - before, 1u);
    ASSERT_EQ(emit_ptx(*program, 70, &again, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_EQ(compilation_count() - before, 2u);
}

}  // namespace
}  // namespace zehal::compiler
