// Builds and runs from several threads at once: programs, host modules and launches of
// one module share nothing they could race on.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "compiler/module_cache.hpp"
#include "host_launch.hpp"

namespace zehal::compiler {
namespace {

using testing::Args;
using testing::grid_1d;

TEST(Concurrency, BuildsAndRunsFromManyThreads) {
    ZEHAL_REQUIRE_COMPILER();
    clear_memory_cache();
    const std::vector<uint8_t> bytes = testing::spirv_file("local_reduce");
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 6; ++t) {
        threads.emplace_back([&, t] {
            std::shared_ptr<const Program> program;
            std::shared_ptr<const HostModule> module;
            std::string log;
            // Different flags: different digests, so each thread compiles its own.
            if (Program::from_spirv(bytes, "-D" + std::to_string(t % 3), &program, &log) != ZE_RESULT_SUCCESS ||
                HostModule::build(program, &module, &log) != ZE_RESULT_SUCCESS) {
                failures.fetch_add(1);
                return;
            }
            for (int round = 0; round < 5; ++round) {
                const uint32_t size = 16u << (round % 3);
                std::vector<uint32_t> in(size * 8, 1), out(8, 0);
                Args args;
                args.value(static_cast<const uint32_t*>(in.data())).value(out.data()).local(size * 4);
                std::string error;
                if (module->run(0, args.launch(), grid_1d(8, size), &error) != ZE_RESULT_SUCCESS ||
                    out != std::vector<uint32_t>(8, size)) {
                    failures.fetch_add(1);
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(failures.load(), 0);
}

TEST(Concurrency, OneModuleRunFromManyThreads) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = testing::build_host("buffers");
    ASSERT_TRUE(built.module);
    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (uint32_t t = 0; t < 8; ++t) {
        threads.emplace_back([&, t] {
            std::vector<uint32_t> data(4096, 0);
            for (int round = 0; round < 20; ++round) {
                Args args;
                args.value(data.data()).value(t * 100 + static_cast<uint32_t>(round));
                std::string error;
                if (built.module->run(built.index("fill_uint"), args.launch(), grid_1d(64, 64), &error) !=
                        ZE_RESULT_SUCCESS ||
                    std::count(data.begin(), data.end(), t * 100 + static_cast<uint32_t>(round)) != 4096) {
                    failures.fetch_add(1);
                }
            }
        });
    }
    for (auto& thread : threads) {
        thread.join();
    }
    EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace zehal::compiler
