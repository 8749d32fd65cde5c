// Kernels with barriers on the host (tests/kernels/barriers.cl), each work-item a
// coroutine: barriers in loops, in conditionals and in a helper function, values and
// private arrays live across barriers, ids after a barrier in 3-D groups, groups of 1 to
// 4096 work-items and many groups, a barrier reached by half the group; a barrier in a
// recursive function refused.
#include <gtest/gtest.h>

#include <array>
#include <numeric>

#include "host_launch.hpp"

namespace zehal::compiler {
namespace {

using testing::Args;
using testing::build_host;
using testing::grid_1d;

TEST(HostBarriers, BarrierInALoop) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("barriers");
    ASSERT_TRUE(built.module);
    for (uint32_t size : {1u, 3u, 64u, 1024u}) {
        const uint32_t groups = 5;
        const int rounds = 7;
        std::vector<int> out(size * groups, -1);
        Args args;
        args.value(out.data()).local(size * sizeof(int)).value(rounds);
        std::string error;
        ASSERT_EQ(built.module->run(built.index("barrier_in_loop"), args.launch(), grid_1d(groups, size), &error),
                  ZE_RESULT_SUCCESS)
            << error;
        for (uint32_t i = 0; i < size * groups; ++i) {
            const int neighbour = static_cast<int>(i / size * size + (i % size + 1) % size);
            // Round r reads the neighbour's id plus 0 + 1 + ... + (r - 1).
            int expected = 0;
            for (int r = 0; r < rounds; ++r) {
                expected += neighbour + r * (r - 1) / 2;
            }
            ASSERT_EQ(out[i], expected) << "size " << size << " item " << i;
        }
    }
}

TEST(HostBarriers, BarrierInAConditionalTakenAlike) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("barriers");
    ASSERT_TRUE(built.module);
    const uint32_t size = 32, groups = 4;
    std::vector<int> in(size * groups);
    std::iota(in.begin(), in.end(), 100);
    for (int flip : {0, 1}) {
        std::vector<int> out(size * groups, -1);
        Args args;
        args.value(static_cast<const int*>(in.data())).value(out.data()).local(size * sizeof(int)).value(flip);
        std::string error;
        ASSERT_EQ(
            built.module->run(built.index("barrier_in_conditional"), args.launch(), grid_1d(groups, size), &error),
            ZE_RESULT_SUCCESS)
            << error;
        for (uint32_t i = 0; i < size * groups; ++i) {
            const uint32_t from = flip != 0 ? i / size * size + (size - 1 - i % size) : i;
            ASSERT_EQ(out[i], in[from]) << "flip " << flip << " item " << i;
        }
    }
}

TEST(HostBarriers, ValuesAndPrivateArraysLiveAcrossBarriers) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("barriers");
    ASSERT_TRUE(built.module);
    const uint32_t size = 48, groups = 9;
    std::vector<double> out(size * groups, -1.0);
    Args args;
    args.value(out.data()).local(size * sizeof(uint32_t));
    std::string error;
    ASSERT_EQ(built.module->run(built.index("live_across_barriers"), args.launch(), grid_1d(groups, size), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t g = 0; g < size * groups; ++g) {
        const uint32_t lid = g % size;
        const double neighbour = g / size * size + (lid + 1) % size;
        const double expected = 3.0 * g + 0.5 * g + g + 120.0 * g + 10.0 * lid + neighbour;
        ASSERT_EQ(out[g], expected) << g;
    }
}

// Groups of 1 to 4096 work-items in one to three dimensions (4096: above the 1024 a
// device reports, which the host runner itself does not limit).
TEST(HostBarriers, IdsAfterABarrierInAHelperCalledInALoop) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("barriers");
    ASSERT_TRUE(built.module);
    const std::vector<std::array<uint32_t, 3>> shapes{{1, 1, 1},  {7, 1, 1},    {4, 8, 1},   {3, 5, 2},
                                                      {8, 8, 16}, {1024, 1, 1}, {16, 16, 16}};
    for (const auto& shape : shapes) {
        LaunchGrid grid;
        grid.group_size = {shape[0], shape[1], shape[2]};
        grid.group_count = {2, shape[1] > 1 ? 2u : 1u, shape[2] > 1 ? 3u : 1u};
        const uint32_t global[3] = {shape[0] * grid.group_count[0], shape[1] * grid.group_count[1],
                                    shape[2] * grid.group_count[2]};
        const uint32_t items = shape[0] * shape[1] * shape[2];
        std::vector<uint32_t> out(4 * size_t{global[0]} * global[1] * global[2], 0xffffffffu);
        Args args;
        args.value(out.data()).local(items * sizeof(uint32_t));
        std::string error;
        ASSERT_EQ(built.module->run(built.index("ids_after_barrier"), args.launch(), grid, &error), ZE_RESULT_SUCCESS)
            << error;
        const uint32_t sum = 2 * (items * (items - 1) / 2);
        for (uint32_t z = 0; z < global[2]; ++z) {
            for (uint32_t y = 0; y < global[1]; ++y) {
                for (uint32_t x = 0; x < global[0]; ++x) {
                    const size_t at = 4 * (x + size_t{global[0]} * (y + size_t{global[1]} * z));
                    ASSERT_EQ(out[at + 0], x % shape[0]) << x << "," << y << "," << z;
                    ASSERT_EQ(out[at + 1], y % shape[1]) << x << "," << y << "," << z;
                    ASSERT_EQ(out[at + 2], z % shape[2]) << x << "," << y << "," << z;
                    ASSERT_EQ(out[at + 3], sum) << x << "," << y << "," << z;
                }
            }
        }
    }
}

TEST(HostBarriers, ManyGroupsOnEveryThread) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("barriers");
    ASSERT_TRUE(built.module);
    const uint32_t size = 16, groups = 20000;
    std::vector<int> out(size * groups, -1);
    Args args;
    args.value(out.data()).local(size * sizeof(int)).value(int{2});
    std::string error;
    ASSERT_EQ(built.module->run(built.index("barrier_in_loop"), args.launch(), grid_1d(groups, size), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < size * groups; ++i) {
        const int neighbour = static_cast<int>(i / size * size + (i % size + 1) % size);
        ASSERT_EQ(out[i], 2 * neighbour) << i;
    }
}

// A barrier that only half of each group reaches: undefined in OpenCL; on the host every
// work-item runs to its end.
TEST(HostBarriers, BarrierReachedByHalfTheGroupEndsEveryWorkItem) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("barriers");
    ASSERT_TRUE(built.module);
    const uint32_t size = 64, groups = 8;
    std::vector<uint32_t> out(size * groups, 0);
    Args args;
    args.value(out.data());
    std::string error;
    ASSERT_EQ(built.module->run(built.index("barrier_in_half"), args.launch(), grid_1d(groups, size), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < size * groups; ++i) {
        ASSERT_EQ(out[i], i + 1);
    }
}

TEST(HostBarriers, BarrierInARecursiveFunctionFailsTheBuildWithALog) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = testing::load_program("barrier_recursion");
    ASSERT_TRUE(program);
    std::shared_ptr<const HostModule> module;
    std::string log;
    EXPECT_EQ(HostModule::build(program, &module, &log), ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    EXPECT_FALSE(module);
    EXPECT_NE(log.find("recursive"), std::string::npos) << log;
}

}  // namespace
}  // namespace zehal::compiler
