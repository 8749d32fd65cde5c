// PTX from SPIR-V: produced for each test kernel, with its entries, __local arguments as
// offsets into dynamic shared memory, reqd_work_group_size as .reqntid. (Running it is
// the CUDA backend's tests, on a GPU.)
#include <gtest/gtest.h>

#include "compiler/ptx_header.hpp"
#include "ptxas.hpp"
#include "spirv_files.hpp"

namespace zehal::compiler {
namespace {

using testing::load_program;

std::string ptx_of(const std::string& name, uint32_t sm) {
    auto program = load_program(name);
    std::string ptx, log;
    if (program) {
        EXPECT_EQ(emit_ptx(*program, sm, &ptx, &log), ZE_RESULT_SUCCESS) << name << ": " << log;
    }
    return ptx;
}

TEST(Ptx, EveryTestKernelBecomesPtx) {
    ZEHAL_REQUIRE_COMPILER();
    for (const char* name : {"buffers", "saxpy", "work_items", "local_reduce", "matrix_multiply", "atomics",
                             "attributes", "faults", "math_builtins"}) {
        auto program = load_program(name);
        ASSERT_TRUE(program) << name;
        const std::string ptx = ptx_of(name, 80);
        EXPECT_NE(ptx.find(".target sm_80"), std::string::npos) << name;
        for (const KernelInfo& kernel : program->kernels()) {
            EXPECT_NE(ptx.find(".entry " + kernel.name + "("), std::string::npos) << name << ": " << kernel.name;
        }
    }
}

// The PTX begins with what a native module built from it again must know: that its entries
// take the global offset, and the kernels' source attributes, read back as written.
TEST(Ptx, TheHeaderCarriesTheGlobalOffsetAndTheSourceAttributes) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = load_program("attributes");
    ASSERT_TRUE(program);
    const std::string ptx = ptx_of("attributes", 80);
    EXPECT_TRUE(ptx_takes_global_offset(ptx));
    const std::map<std::string, std::string> read = ptx_source_attributes(ptx);
    size_t with = 0;
    for (const KernelInfo& k : program->kernels()) {
        if (k.attributes.empty()) {
            EXPECT_EQ(read.count(k.name), 0u) << k.name;
            continue;
        }
        ++with;
        ASSERT_EQ(read.count(k.name), 1u) << k.name;
        EXPECT_EQ(read.at(k.name), k.attributes);
    }
    EXPECT_GT(with, 0u);
    // PTX of another compiler has neither.
    const std::string other = ".version 7.0\n.target sm_80\n.visible .entry k(.param .u64 k_param_0)\n{\nret;\n}\n";
    EXPECT_FALSE(ptx_takes_global_offset(other));
    EXPECT_TRUE(ptx_source_attributes(other).empty());
}

TEST(Ptx, LocalArgumentsAreOffsetsIntoDynamicSharedMemory) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptx = ptx_of("local_reduce", 80);
    EXPECT_NE(ptx.find(".extern .shared .align 16 .b8"), std::string::npos) << ptx;
    const size_t entry = ptx.find(".entry reduce_sum(");
    ASSERT_NE(entry, std::string::npos);
    const std::string params = ptx.substr(entry, ptx.find(')', entry) - entry);
    EXPECT_EQ(params.find(".shared"), std::string::npos) << params;
    EXPECT_NE(params.find(".param .u64 reduce_sum_param_2"), std::string::npos) << params;
}

TEST(Ptx, RequiredGroupSizeAndNewerTargets) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptx = ptx_of("matrix_multiply", 90);
    EXPECT_NE(ptx.find(".reqntid 16, 16, 1"), std::string::npos) << ptx.substr(0, 2000);
    EXPECT_NE(ptx.find(".target sm_"), std::string::npos);
    EXPECT_EQ(ptx.find(".target sm_9"), std::string::npos) << "LLVM 15 does not know sm_90";
}

// Program-scope variables stay visible by name in the PTX (cuModuleGetGlobal finds them),
// with their initial values; the program lists them with their sizes.
TEST(Ptx, ProgramScopeVariablesKeepTheirNames) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = load_program("globals");
    ASSERT_TRUE(program);
    ASSERT_EQ(program->globals().size(), 3u);
    EXPECT_EQ(program->globals()[0].name, "counter");
    EXPECT_EQ(program->globals()[0].size, 4u);
    EXPECT_FALSE(program->globals()[0].constant);
    EXPECT_EQ(program->globals()[1].name, "weights");
    EXPECT_EQ(program->globals()[1].size, 16u);
    EXPECT_EQ(program->globals()[2].name, "table");
    EXPECT_EQ(program->globals()[2].size, 32u);
    EXPECT_TRUE(program->globals()[2].constant);
    const std::string ptx = ptx_of("globals", 80);
    EXPECT_NE(ptx.find(".visible .global .align 4 .u32 counter = 5;"), std::string::npos) << ptx.substr(0, 2000);
    EXPECT_NE(ptx.find(".visible .global .align 4 .b8 weights[16]"), std::string::npos) << ptx.substr(0, 2000);
    EXPECT_NE(ptx.find(".visible .global .align 4 .b8 table[32]"), std::string::npos) << ptx.substr(0, 2000);
}

// Every kernel takes the launch's global offset as three trailing 32-bit parameters, which
// get_global_offset() returns and get_global_id() adds; the PTX assembles (where ptxas is
// found).
TEST(Ptx, KernelsTakeTheGlobalOffsetAfterTheirParameters) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptx = ptx_of("work_items", 80);
    const size_t entry = ptx.find(".entry work_item_ids(");
    ASSERT_NE(entry, std::string::npos) << ptx.substr(0, 2000);
    const std::string params = ptx.substr(entry, ptx.find(')', entry) - entry);
    EXPECT_NE(params.find(".param .u64 work_item_ids_param_0"), std::string::npos) << params;
    for (const char* p : {"work_item_ids_param_1", "work_item_ids_param_2", "work_item_ids_param_3"})
        EXPECT_NE(params.find(std::string(".param .u32 ") + p), std::string::npos) << params;
    EXPECT_EQ(params.find("work_item_ids_param_4"), std::string::npos) << params;
    // Read by the kernel (the optimiser may keep them in registers rather than shared memory).
    for (const char* p : {"[work_item_ids_param_1]", "[work_item_ids_param_2]", "[work_item_ids_param_3]"})
        EXPECT_NE(ptx.find(p), std::string::npos) << p;
    // A module that reads no offset keeps no shared copy, but its kernels take the parameters.
    const std::string plain = ptx_of("attributes", 80);
    EXPECT_EQ(plain.find("zehal_global_offset"), std::string::npos);
    EXPECT_NE(plain.find(".param .u32 empty_param_2"), std::string::npos) << plain.substr(0, 2000);
    const std::string ptxas = testing::find_ptxas();
    if (ptxas.empty()) GTEST_SKIP() << "no ptxas (set ZEHAL_PTXAS or CUDA_HOME): the PTX is not assembled";
    EXPECT_EQ(testing::ptxas_errors(ptxas, ptx, 80), "");
    EXPECT_EQ(testing::ptxas_errors(ptxas, plain, 80), "");
}

// Calls through function pointers become NVPTX's indirect calls, which ptxas takes.
TEST(Ptx, CallsThroughFunctionPointersBecomeIndirectCalls) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptx = ptx_of("function_pointers", 80);
    EXPECT_NE(ptx.find(".entry call_pointer("), std::string::npos) << ptx.substr(0, 2000);
    EXPECT_NE(ptx.find("prototype"), std::string::npos) << ptx.substr(0, 4000);
    const std::string ptxas = testing::find_ptxas();
    if (ptxas.empty()) GTEST_SKIP() << "no ptxas (set ZEHAL_PTXAS or CUDA_HOME): the PTX is not assembled";
    EXPECT_EQ(testing::ptxas_errors(ptxas, ptx, 80), "");
}

}  // namespace
}  // namespace zehal::compiler
