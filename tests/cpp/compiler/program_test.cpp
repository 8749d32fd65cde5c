// Program::from_spirv: kernel signatures from the SPIR-V, the digest, and bad input.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "spirv_files.hpp"

namespace zehal::compiler {
namespace {

using testing::load_program;
using testing::spirv_file;

TEST(Program, ListsKernelsInOrderWithSignatures) {
    ZEHAL_REQUIRE_COMPILER();
    auto program = load_program("buffers");
    ASSERT_TRUE(program);
    const auto& kernels = program->kernels();
    ASSERT_EQ(kernels.size(), 6u);
    EXPECT_EQ(kernels[0].name, "copy_bytes");
    EXPECT_EQ(kernels[5].name, "fill_range_ulong");
    EXPECT_EQ(program->find("add_int_constant"), 3);
    EXPECT_EQ(program->find("no_such_kernel"), -1);
    const auto& add = kernels[3];
    ASSERT_EQ(add.args.size(), 3u);
    EXPECT_EQ(add.args[0].kind, ArgKind::global);
    EXPECT_EQ(add.args[0].size, 8u);
    EXPECT_EQ(add.args[2].kind, ArgKind::value);
    EXPECT_EQ(add.args[2].size, 4u);
    EXPECT_EQ(kernels[5].args[2].size, 8u);  // ulong
    EXPECT_EQ(add.required_group_size, (std::array<uint32_t, 3>{0, 0, 0}));
}

TEST(Program, ReadsLocalArgumentsAttributesAndByValueStructs) {
    ZEHAL_REQUIRE_COMPILER();
    auto reduce = load_program("local_reduce");
    ASSERT_TRUE(reduce);
    const KernelInfo& sum = reduce->kernels()[static_cast<size_t>(reduce->find("reduce_sum"))];
    ASSERT_EQ(sum.args.size(), 3u);
    EXPECT_EQ(sum.args[2].kind, ArgKind::local);
    EXPECT_EQ(sum.args[2].size, 0u);
    const KernelInfo& reverse = reduce->kernels()[static_cast<size_t>(reduce->find("reverse_in_group"))];
    EXPECT_EQ(reverse.local_bytes, 256u * 4u);

    auto attributes = load_program("attributes");
    ASSERT_TRUE(attributes);
    const KernelInfo& reqd = attributes->kernels()[static_cast<size_t>(attributes->find("reqd_size"))];
    EXPECT_EQ(reqd.required_group_size, (std::array<uint32_t, 3>{8, 4, 1}));
    EXPECT_EQ(reqd.attributes, "reqd_work_group_size(8,4,1)");
    const KernelInfo& empty = attributes->kernels()[static_cast<size_t>(attributes->find("empty"))];
    EXPECT_TRUE(empty.args.empty());
    EXPECT_EQ(empty.attributes, "");
    const KernelInfo& hinted = attributes->kernels()[static_cast<size_t>(attributes->find("hinted"))];
    EXPECT_EQ(hinted.attributes, "work_group_size_hint(1,1,1) vec_type_hint(float4)");
    const KernelInfo& by_value = attributes->kernels()[static_cast<size_t>(attributes->find("by_value"))];
    ASSERT_EQ(by_value.args.size(), 2u);
    EXPECT_EQ(by_value.args[1].kind, ArgKind::value);
    EXPECT_EQ(by_value.args[1].size, 16u);  // {int, float, long}
}

TEST(Program, DigestCoversBytesAndFlags) {
    ZEHAL_REQUIRE_COMPILER();
    const auto bytes = spirv_file("saxpy");
    std::shared_ptr<const Program> a, b, c;
    std::string log;
    ASSERT_EQ(Program::from_spirv(bytes, "", &a, &log), ZE_RESULT_SUCCESS) << log;
    ASSERT_EQ(Program::from_spirv(bytes, "", &b, &log), ZE_RESULT_SUCCESS) << log;
    ASSERT_EQ(Program::from_spirv(bytes, "-cl-fast-relaxed-math", &c, &log), ZE_RESULT_SUCCESS) << log;
    EXPECT_EQ(a->digest(), b->digest());
    EXPECT_NE(a->digest(), c->digest());
}

// Bad input is MODULE_BUILD_FAILURE with a log, never a crash or a program.
void expect_build_failure(const std::vector<uint8_t>& bytes, const char* what) {
    std::shared_ptr<const Program> program;
    std::string log;
    EXPECT_EQ(Program::from_spirv(bytes, "", &program, &log), ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) << what;
    EXPECT_FALSE(program) << what;
    EXPECT_FALSE(log.empty()) << what;
}

void put_word(std::vector<uint8_t>& bytes, size_t index, uint32_t word) {
    std::memcpy(bytes.data() + index * 4, &word, 4);
}

TEST(Program, RejectsBadBinaries) {
    ZEHAL_REQUIRE_COMPILER();
    const auto good = spirv_file("buffers");
    ASSERT_GT(good.size(), 64u);
    expect_build_failure({}, "empty");
    expect_build_failure(
        {'h', 'e', 'l', 'l', 'o', ' ', 'w', 'o', 'r', 'l', 'd', '!', ' ', ' ', ' ', ' ', 'x', 'y', 'z', 'w'}, "text");
    expect_build_failure(std::vector<uint8_t>(good.begin(), good.begin() + good.size() / 2), "truncated half");
    expect_build_failure(std::vector<uint8_t>(good.begin(), good.end() - 3), "not whole words");
    auto huge_bound = good;
    put_word(huge_bound, 3, 0xffffffffu);
    expect_build_failure(huge_bound, "huge id bound");
    auto bad_version = good;
    put_word(bad_version, 1, 0x00090000u);
    expect_build_failure(bad_version, "unknown version");
    auto swapped = good;
    put_word(swapped, 0, 0x03022307u);
    expect_build_failure(swapped, "big-endian");
}

TEST(Program, RejectsUnknownCapability) {
    ZEHAL_REQUIRE_COMPILER();
    auto bytes = spirv_file("buffers");
    // The first instruction after the header is OpCapability (opcode 17, 2 words).
    uint32_t first = 0;
    std::memcpy(&first, bytes.data() + 20, 4);
    ASSERT_EQ(first, (2u << 16) | 17u);
    put_word(bytes, 6, 4999u);  // no such capability
    expect_build_failure(bytes, "unknown capability");
}

// Random bytes after a valid header, and random single-word corruptions of a real module:
// each either builds or fails with a log; none crashes.
TEST(Program, SurvivesCorruptedModules) {
    ZEHAL_REQUIRE_COMPILER();
    const auto good = spirv_file("atomics");
    std::mt19937 random(1234);
    for (int round = 0; round < 30; ++round) {
        auto bytes = good;
        const size_t words = bytes.size() / 4;
        for (int n = 0; n < 1 + round % 3; ++n) {
            const size_t at = 5 + random() % (words - 5);
            put_word(bytes, at, random());
        }
        std::shared_ptr<const Program> program;
        std::string log;
        const ze_result_t r = Program::from_spirv(bytes, "", &program, &log);
        EXPECT_TRUE(r == ZE_RESULT_SUCCESS || (r == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE && !log.empty()))
            << "round " << round << ": " << r;
    }
    for (int round = 0; round < 10; ++round) {
        std::vector<uint8_t> bytes(good.begin(), good.begin() + 20);
        for (int i = 0; i < 64; ++i) {
            bytes.push_back(static_cast<uint8_t>(random()));
        }
        std::shared_ptr<const Program> program;
        std::string log;
        const ze_result_t r = Program::from_spirv(bytes, "", &program, &log);
        EXPECT_TRUE(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) << "random " << round;
    }
}

}  // namespace
}  // namespace zehal::compiler
