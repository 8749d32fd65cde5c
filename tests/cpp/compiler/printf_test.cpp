// printf in kernels (kernels/printf.cl): the C library's on the host, CUDA's vprintf in PTX.
#include <gtest/gtest.h>

#include <cstdio>
#include <vector>

#include "host_launch.hpp"

namespace zehal::compiler {
namespace {

using testing::Args;
using testing::build_host;
using testing::grid_1d;
using testing::load_program;

TEST(Printf, PrintsOnTheHost) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("printf");
    ASSERT_TRUE(built.module);
    std::vector<int32_t> out(4, -1);
    Args args;
    args.value(out.data()).value(1.5f).value(2.25).value(int64_t{-1234567890123}).value(int16_t{-7}).value('z');
    std::string error;
    ::testing::internal::CaptureStdout();
    const ze_result_t r = built.module->run(built.index("print_values"), args.launch(), grid_1d(2, 2), &error);
    std::fflush(stdout);
    const std::string printed = ::testing::internal::GetCapturedStdout();
    ASSERT_EQ(r, ZE_RESULT_SUCCESS) << error;
    EXPECT_EQ(out, (std::vector<int32_t>{0, 1, 2, 3}));
    for (int i = 0; i < 4; ++i) {
        const std::string line = "item " + std::to_string(i) +
                                 ": float 1.50 double 2.250 long -1234567890123 short -7 char z string text\n";
        EXPECT_NE(printed.find(line), std::string::npos) << printed;
    }
    EXPECT_NE(printed.find("pointer is null: 0\n"), std::string::npos) << printed;
}

TEST(Printf, BecomesVprintfInPtx) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = load_program("printf");
    ASSERT_TRUE(program);
    std::string ptx, log;
    ASSERT_EQ(emit_ptx(*program, 80, &ptx, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_NE(ptx.find(".extern .func  (.param .b32 func_retval0) vprintf"), std::string::npos) << ptx;
    EXPECT_NE(ptx.find("call.uni (retval0), \n\tvprintf,"), std::string::npos) << ptx;
    EXPECT_EQ(ptx.find(".const"), std::string::npos) << ptx;
}

TEST(Printf, VectorArgumentsAreRefusedInPtx) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = load_program("printf_vector");
    ASSERT_TRUE(program);
    std::string ptx, log;
    EXPECT_EQ(emit_ptx(*program, 80, &ptx, &log), ZE_RESULT_ERROR_MODULE_BUILD_FAILURE);
    EXPECT_NE(log.find("printf with vector arguments"), std::string::npos) << log;
}

}  // namespace
}  // namespace zehal::compiler
