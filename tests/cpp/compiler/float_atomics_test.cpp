// Floating-point atomics (tests/kernels/float_atomics/float_atomics.cl, half_atomics.cl,
// half_atomic_add.cl): exact results from many work-items on the host, for half, float
// and double, in global and local memory; and PTX with native adds of float and double
// that ptxas accepts (where ptxas is found).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
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
using testing::spirv_file;

constexpr uint32_t kGroups = 64;
constexpr uint32_t kGroupSize = 32;
constexpr uint32_t kItems = kGroups * kGroupSize;

// The half of a small integer (|value| < 2048, exact in half) and back.
uint16_t to_half(int value) {
    if (value == 0) {
        return 0;
    }
    const uint16_t sign = value < 0 ? 0x8000 : 0;
    const auto magnitude = static_cast<uint32_t>(std::abs(value));
    const int exponent = 31 - __builtin_clz(magnitude);
    const uint32_t mantissa = (magnitude << (10 - exponent)) & 0x3ff;
    return static_cast<uint16_t>(sign | ((exponent + 15) << 10) | mantissa);
}

double from_half(uint16_t bits) {
    const int exponent = (bits >> 10) & 0x1f;
    const double mantissa = bits & 0x3ff;
    const double magnitude = exponent == 0 ? std::ldexp(mantissa, -24)
                                           : std::ldexp(1.0 + mantissa / 1024.0, exponent - 15);
    return (bits & 0x8000) != 0 ? -magnitude : magnitude;
}

void run(const testing::Built& built, const char* kernel, const Args& args, uint32_t groups = kGroups) {
    std::string error;
    ASSERT_EQ(built.module->run(built.index(kernel), args.launch(), grid_1d(groups, kGroupSize), &error),
              ZE_RESULT_SUCCESS)
        << kernel << ": " << error;
}

template <typename T>
void expect_global_atomics(const char* kernel) {
    auto built = build_host("float_atomics");
    ASSERT_TRUE(built.module);
    const T n = kItems;
    std::vector<T> counters{0, 0, 0, -1, 1e6, -1, -1, T(42.5), T(-0.0)};
    std::vector<T> olds(kItems, -1), loads(kItems, -1);
    Args args;
    args.value(counters.data()).value(olds.data()).value(loads.data());
    run(built, kernel, args);
    EXPECT_EQ(counters[0], n);
    EXPECT_EQ(counters[1], n * (n - 1) / 2);
    EXPECT_EQ(counters[2], -n);
    EXPECT_EQ(counters[3], n - 1);
    EXPECT_EQ(counters[4], 0);
    for (int i : {5, 6}) {
        EXPECT_GE(counters[i], 0) << i;
        EXPECT_LT(counters[i], n) << i;
        EXPECT_EQ(counters[i], std::floor(counters[i])) << i;
    }
    EXPECT_EQ(counters[7], T(42.5));
    EXPECT_EQ(counters[8], 0);
    EXPECT_TRUE(std::signbit(counters[8])) << "a load changed -0.0 into +0.0";
    // Every add saw a different count: the values returned are 0 .. n-1.
    std::sort(olds.begin(), olds.end());
    for (uint32_t i = 0; i < kItems; ++i) {
        ASSERT_EQ(olds[i], T(i));
    }
    EXPECT_EQ(std::count(loads.begin(), loads.end(), T(42.5)), kItems);
}

template <typename T>
void expect_local_atomics(const char* kernel) {
    auto built = build_host("float_atomics");
    ASSERT_TRUE(built.module);
    std::vector<T> totals(4 * kGroups, -1);
    Args args;
    args.value(totals.data());
    run(built, kernel, args);
    const T size = kGroupSize;
    for (uint32_t g = 0; g < kGroups; ++g) {
        EXPECT_EQ(totals[4 * g], size) << g;
        EXPECT_EQ(totals[4 * g + 1], size * (size - 1) / 2) << g;
        EXPECT_EQ(totals[4 * g + 2], 0) << g;
        EXPECT_EQ(totals[4 * g + 3], size - 1) << g;
    }
}

TEST(FloatAtomics, FloatInGlobalMemory) {
    ZEHAL_REQUIRE_COMPILER();
    expect_global_atomics<float>("float_global");
}

TEST(FloatAtomics, DoubleInGlobalMemory) {
    ZEHAL_REQUIRE_COMPILER();
    expect_global_atomics<double>("double_global");
}

TEST(FloatAtomics, FloatInLocalMemory) {
    ZEHAL_REQUIRE_COMPILER();
    expect_local_atomics<float>("float_local");
}

TEST(FloatAtomics, DoubleInLocalMemory) {
    ZEHAL_REQUIRE_COMPILER();
    expect_local_atomics<double>("double_local");
}

TEST(FloatAtomics, HalfInGlobalMemory) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("half_atomics");
    ASSERT_TRUE(built.module);
    std::vector<uint16_t> counters{to_half(-1), to_half(2000), to_half(-1), to_half(-1), to_half(7)};
    std::vector<uint16_t> loads(kItems, 0);
    Args args;
    args.value(counters.data()).value(loads.data());
    run(built, "half_global", args);
    EXPECT_EQ(from_half(counters[0]), kItems - 1);
    EXPECT_EQ(from_half(counters[1]), 0);
    for (int i : {2, 3}) {
        EXPECT_GE(from_half(counters[i]), 0) << i;
        EXPECT_LT(from_half(counters[i]), kItems) << i;
    }
    EXPECT_EQ(counters[4], to_half(7));
    EXPECT_EQ(std::count(loads.begin(), loads.end(), to_half(7)), kItems);
}

TEST(FloatAtomics, HalfInLocalMemory) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("half_atomics");
    ASSERT_TRUE(built.module);
    std::vector<uint16_t> totals(2 * kGroups, to_half(-5));
    Args args;
    args.value(totals.data());
    run(built, "half_local", args);
    for (uint32_t g = 0; g < kGroups; ++g) {
        EXPECT_EQ(from_half(totals[2 * g]), 0) << g;
        EXPECT_EQ(from_half(totals[2 * g + 1]), kGroupSize - 1) << g;
    }
}

// half_atomic_add.spv with each OpAtomicFMinEXT made OpAtomicFAddEXT, and the capability
// AtomicFloat16MinMaxEXT made AtomicFloat16AddEXT (what clang-15 cannot write).
std::shared_ptr<const Program> half_add_program() {
    std::vector<uint8_t> bytes = spirv_file("half_atomic_add");
    EXPECT_FALSE(bytes.empty());
    std::vector<uint32_t> words(bytes.size() / 4);
    std::memcpy(words.data(), bytes.data(), words.size() * 4);
    constexpr uint32_t kOpCapability = 17, kOpAtomicFMinEXT = 5614, kOpAtomicFAddEXT = 6035;
    constexpr uint32_t kAtomicFloat16MinMaxEXT = 5616, kAtomicFloat16AddEXT = 6095;
    for (size_t at = 5; at < words.size() && (words[at] >> 16) != 0; at += words[at] >> 16) {
        const uint32_t op = words[at] & 0xffff;
        if (op == kOpCapability && words[at + 1] == kAtomicFloat16MinMaxEXT) {
            words[at + 1] = kAtomicFloat16AddEXT;
        } else if (op == kOpAtomicFMinEXT) {
            words[at] = (words[at] & 0xffff0000u) | kOpAtomicFAddEXT;
        }
    }
    std::memcpy(bytes.data(), words.data(), words.size() * 4);
    std::shared_ptr<const Program> program;
    std::string log;
    EXPECT_EQ(Program::from_spirv(bytes, "", &program, &log), ZE_RESULT_SUCCESS) << log;
    return program;
}

TEST(FloatAtomics, HalfAddInGlobalAndLocalMemory) {
    ZEHAL_REQUIRE_COMPILER();
    testing::Built built;
    built.program = half_add_program();
    ASSERT_TRUE(built.program);
    std::string log;
    ASSERT_EQ(HostModule::build(built.program, &built.module, &log), ZE_RESULT_SUCCESS) << log;
    // Sums up to 2048 stay exact in half: 1024 work-items add 1, and 0..3 each.
    const uint32_t groups = 1024 / kGroupSize;
    std::vector<uint16_t> sums{0, 0};
    std::vector<uint16_t> olds(1024, to_half(-1));
    Args args;
    args.value(sums.data()).value(olds.data());
    run(built, "half_add_global", args, groups);
    EXPECT_EQ(from_half(sums[0]), 1024);
    EXPECT_EQ(from_half(sums[1]), 1536);
    std::vector<double> seen;
    for (uint16_t old : olds) {
        seen.push_back(from_half(old));
    }
    std::sort(seen.begin(), seen.end());
    for (uint32_t i = 0; i < seen.size(); ++i) {
        ASSERT_EQ(seen[i], i);
    }
    std::vector<uint16_t> totals(groups, 0);
    Args local;
    local.value(totals.data());
    run(built, "half_add_local", local, groups);
    EXPECT_EQ(std::count(totals.begin(), totals.end(), to_half(kGroupSize)), groups);
}

std::string ptx_of(const std::shared_ptr<const Program>& program, uint32_t sm) {
    std::string ptx, log;
    if (program) {
        EXPECT_EQ(emit_ptx(*program, sm, &ptx, &log), ZE_RESULT_SUCCESS) << log;
    }
    return ptx;
}

TEST(FloatAtomics, PtxAddsFloatAndDoubleNatively) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptx = ptx_of(load_program("float_atomics"), 80);
    ASSERT_FALSE(ptx.empty());
    for (const char* instruction : {"atom.global.add.f32", "atom.global.add.f64", "atom.shared.add.f32",
                                    "atom.shared.add.f64", "atom.shared.cas.b32", "atom.shared.cas.b64"}) {
        EXPECT_NE(ptx.find(instruction), std::string::npos) << instruction << "\n" << ptx;
    }
}

TEST(FloatAtomics, PtxasAcceptsEveryFloatAtomic) {
    ZEHAL_REQUIRE_COMPILER();
    const std::string ptxas = find_ptxas();
    if (ptxas.empty()) {
        GTEST_SKIP() << "no ptxas (set ZEHAL_PTXAS or CUDA_HOME): the PTX is not assembled";
    }
    for (uint32_t sm : {80u, 90u}) {
        for (const char* name : {"float_atomics", "half_atomics"}) {
            const std::string ptx = ptx_of(load_program(name), sm);
            ASSERT_FALSE(ptx.empty()) << name;
            EXPECT_EQ(ptxas_errors(ptxas, ptx, sm), "") << name << " sm_" << sm;
        }
        const std::string ptx = ptx_of(half_add_program(), sm);
        ASSERT_FALSE(ptx.empty());
        EXPECT_EQ(ptxas_errors(ptxas, ptx, sm), "") << "half_atomic_add sm_" << sm;
    }
}

}  // namespace
}  // namespace zehal::compiler
