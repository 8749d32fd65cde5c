// Kernels with generic pointers, __constant arguments and tables, and structs of pointers
// (kernels/address_spaces.cl, kernels/generic_casts.cl): the right numbers on the host,
// and PTX in NVPTX's address spaces that ptxas accepts (checked where ptxas is found:
// $ZEHAL_PTXAS, else $CUDA_HOME/bin/ptxas, else /usr/local/cuda/bin/ptxas, else PATH).
#include <gtest/gtest.h>

#include <vector>

#include "host_launch.hpp"
#include "ptxas.hpp"

namespace zehal::compiler {
namespace {

using testing::Args;
using testing::build_host;
using testing::find_ptxas;
using testing::grid_1d;
using testing::load_program;
using testing::ptxas_errors;

// The SPIR-V of the kernels here and of tests/kernels: every one must become PTX.
const char* const kEveryKernelFile[] = {"address_spaces", "generic_casts", "buffers",         "saxpy",
                                        "work_items",     "local_reduce",  "matrix_multiply", "atomics",
                                        "attributes",     "faults",        "math_builtins",   "printf"};

std::string ptx_of(const std::string& name, uint32_t sm) {
    auto program = load_program(name);
    std::string ptx, log;
    if (program) {
        EXPECT_EQ(emit_ptx(*program, sm, &ptx, &log), ZE_RESULT_SUCCESS) << name << ": " << log;
    }
    return ptx;
}

TEST(AddressSpaces, GenericPointersOnTheHost) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("address_spaces");
    ASSERT_TRUE(built.module);
    const uint32_t n = 192;
    std::vector<int32_t> in(n), out(n, -1);
    for (uint32_t i = 0; i < n; ++i) {
        in[i] = static_cast<int32_t>(i * 7) - 100;
    }
    Args args;
    args.value(out.data()).value(in.data());
    std::string error;
    ASSERT_EQ(built.module->run(built.index("generic_pointers"), args.launch(), grid_1d(n / 64, 64), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], 2 * in[i] + 13) << i;
    }
}

TEST(AddressSpaces, ConstantArgumentsTablesAndBuiltinsOnTheHost) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("address_spaces");
    ASSERT_TRUE(built.module);
    const uint32_t n = 40;
    const int32_t squares[8] = {0, 1, 4, 9, 16, 25, 36, 49};
    std::vector<int32_t> table{5, -3, 11, 2, 8}, out(n, -1);
    Args tables;
    tables.value(out.data()).value(table.data()).value(static_cast<int32_t>(table.size()));
    std::string error;
    ASSERT_EQ(built.module->run(built.index("constant_tables"), tables.launch(), grid_1d(n / 8, 8), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], table[i % table.size()] + squares[i % 8]) << i;
    }
    std::vector<int32_t> pairs(2 * n), doubled(2 * n, -1);
    for (uint32_t i = 0; i < 2 * n; ++i) {
        pairs[i] = static_cast<int32_t>(i * i) - 50;
    }
    int32_t counter = 0;
    Args builtins;
    builtins.value(doubled.data()).value(pairs.data()).value(&counter);
    ASSERT_EQ(built.module->run(built.index("generic_builtins"), builtins.launch(), grid_1d(n / 4, 4), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < 2 * n; ++i) {
        ASSERT_EQ(doubled[i], 2 * pairs[i]) << i;
    }
    EXPECT_EQ(counter, static_cast<int32_t>(n));
}

TEST(AddressSpaces, StructsOfPointersOnTheHost) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("address_spaces");
    ASSERT_TRUE(built.module);
    const uint32_t items = 6, count = 9;
    std::vector<std::vector<uint32_t>> sources(items), targets(items, std::vector<uint32_t>(count, 0));
    std::vector<uint32_t*> in(items), out(items);
    for (uint32_t i = 0; i < items; ++i) {
        for (uint32_t k = 0; k < count; ++k) {
            sources[i].push_back(1000 * i + k);
        }
        in[i] = sources[i].data();
        out[i] = targets[i].data();
    }
    Args args;
    args.value(in.data()).value(out.data()).value(static_cast<int32_t>(count));
    std::string error;
    ASSERT_EQ(built.module->run(built.index("copy_indirect"), args.launch(), grid_1d(items / 2, 2), &error),
              ZE_RESULT_SUCCESS)
        << error;
    EXPECT_EQ(targets, sources);
}

// to_global, to_local and to_private on the host: in work-item loops (generic_casts) and
// in coroutines with a __local argument (generic_casts_exact, whose private array lives
// across a barrier: in the work-item's frame), each pointer is kept only by the cast to
// its own space.
TEST(AddressSpaces, GenericCastsOnTheHost) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("generic_casts");
    ASSERT_TRUE(built.module);
    const uint32_t n = 96;
    std::vector<int32_t> out(n, -1);
    Args loop;
    loop.value(out.data());
    std::string error;
    ASSERT_EQ(built.module->run(built.index("generic_casts"), loop.launch(), grid_1d(n / 16, 16), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], 1 << (i % 3)) << i;
    }
    const uint32_t group = 8;
    std::vector<int32_t> exact(n);
    for (uint32_t i = 0; i < n; ++i) {
        exact[i] = static_cast<int32_t>(i % 3);
    }
    Args coroutines;
    coroutines.value(exact.data()).local(group * sizeof(int32_t));
    ASSERT_EQ(
        built.module->run(built.index("generic_casts_exact"), coroutines.launch(), grid_1d(n / group, group), &error),
        ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(exact[i], 1 << (i % 3)) << i;
    }
}

// PTX of SPIR's generic and constant pointers: no access to the constant bank (SPIR's
// generic space has NVPTX's constant number), module-scope __constant tables in global
// memory, generic pointers made from local and shared ones, to_global and its kin as
// isspacep tests.
TEST(AddressSpaces, PtxUsesNvptxSpaces) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptx = ptx_of("address_spaces", 90);
    ASSERT_FALSE(ptx.empty());
    EXPECT_EQ(ptx.find(".const"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find(".global .align 4 .b8 kSquares[32]"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("cvta.shared"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("cvta.local"), std::string::npos) << ptx;
    for (const char* kernel : {"generic_pointers", "generic_builtins", "constant_tables", "copy_indirect"}) {
        EXPECT_NE(ptx.find(std::string(".entry ") + kernel + "("), std::string::npos) << kernel;
    }
    const std::string casts = ptx_of("generic_casts", 90);
    for (const char* test : {"isspacep.global", "isspacep.shared", "isspacep.local"}) {
        EXPECT_NE(casts.find(test), std::string::npos) << test << "\n" << casts;
    }
    EXPECT_EQ(casts.find(".const"), std::string::npos) << casts;
}

TEST(AddressSpaces, PtxasAcceptsEveryTestKernel) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptxas = find_ptxas();
    if (ptxas.empty()) {
        GTEST_SKIP() << "no ptxas (set ZEHAL_PTXAS or CUDA_HOME): the PTX is not assembled";
    }
    for (const char* name : kEveryKernelFile) {
        const std::string ptx = ptx_of(name, 90);
        ASSERT_FALSE(ptx.empty()) << name;
        EXPECT_EQ(ptxas_errors(ptxas, ptx, 90), "") << name;
    }
}

}  // namespace
}  // namespace zehal::compiler
