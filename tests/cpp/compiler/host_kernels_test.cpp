// The kernels of tests/kernels run on the host and give the right numbers.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "host_launch.hpp"

namespace zehal::compiler {
namespace {

using testing::Args;
using testing::build_host;
using testing::grid_1d;

TEST(HostKernels, CopyAddFill) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("buffers");
    ASSERT_TRUE(built.module);
    const uint32_t n = 1000;
    std::vector<float> a(n), b(n), c(n, -1.0f);
    for (uint32_t i = 0; i < n; ++i) {
        a[i] = static_cast<float>(i);
        b[i] = static_cast<float>(2 * i);
    }
    std::string error;
    Args add;
    add.value(a.data()).value(b.data()).value(c.data());
    ASSERT_EQ(built.module->run(built.index("add_float"), add.launch(), grid_1d(n / 8, 8), &error), ZE_RESULT_SUCCESS)
        << error;
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(c[i], 3.0f * static_cast<float>(i)) << i;
    }
    std::vector<uint32_t> filled(n, 0);
    Args fill;
    fill.value(filled.data()).value(uint32_t{0xabcd1234u});
    ASSERT_EQ(built.module->run(built.index("fill_uint"), fill.launch(), grid_1d(n / 100, 100), &error),
              ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::count(filled.begin(), filled.end(), 0xabcd1234u), n);
    std::vector<uint32_t> copied(n, 0);
    Args copy;
    copy.value(copied.data()).value(static_cast<const uint32_t*>(filled.data()));
    ASSERT_EQ(built.module->run(built.index("copy_uint"), copy.launch(), grid_1d(n, 1), &error), ZE_RESULT_SUCCESS);
    EXPECT_EQ(copied, filled);
    std::vector<int> in(n), out(n);
    std::iota(in.begin(), in.end(), -500);
    Args add_constant;
    add_constant.value(in.data()).value(out.data()).value(int{7});
    ASSERT_EQ(built.module->run(built.index("add_int_constant"), add_constant.launch(), grid_1d(n / 10, 10), &error),
              ZE_RESULT_SUCCESS);
    for (uint32_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], in[i] + 7);
    }
    std::vector<uint64_t> range(10, 0);
    Args fill_range;
    fill_range.value(range.data()).value(uint32_t{10}).value(uint64_t{1} << 40);
    ASSERT_EQ(built.module->run(built.index("fill_range_ulong"), fill_range.launch(), grid_1d(4, 4), &error),
              ZE_RESULT_SUCCESS);
    for (uint64_t i = 0; i < 10; ++i) {
        EXPECT_EQ(range[i], (uint64_t{1} << 40) + i);
    }
}

TEST(HostKernels, WorkItemFunctionsIn3d) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("work_items");
    ASSERT_TRUE(built.module);
    LaunchGrid grid;
    grid.group_count = {3, 2, 2};
    grid.group_size = {4, 3, 2};
    grid.global_offset = {5, 6, 7};
    const uint64_t gx = 12, gy = 6, gz = 4;
    std::vector<uint64_t> out(gx * gy * gz * 16, ~uint64_t{0});
    Args args;
    args.value(out.data());
    std::string error;
    ASSERT_EQ(built.module->run(0, args.launch(), grid, &error), ZE_RESULT_SUCCESS) << error;
    for (uint64_t z = 0; z < gz; ++z) {
        for (uint64_t y = 0; y < gy; ++y) {
            for (uint64_t x = 0; x < gx; ++x) {
                const uint64_t* o = &out[((z * gy + y) * gx + x) * 16];
                ASSERT_EQ(o[0], x + 5);
                ASSERT_EQ(o[1], y + 6);
                ASSERT_EQ(o[2], z + 7);
                ASSERT_EQ(o[3], x % 4);
                ASSERT_EQ(o[4], y % 3);
                ASSERT_EQ(o[5], z % 2);
                ASSERT_EQ(o[6], x / 4);
                ASSERT_EQ(o[7], y / 3);
                ASSERT_EQ(o[8], z / 2);
                ASSERT_EQ(o[9], 40302u);
                ASSERT_EQ(o[10], 30202u);
                ASSERT_EQ(o[11], 120604u);
                ASSERT_EQ(o[12], 50607u);
                ASSERT_EQ(o[13], 3u);
                ASSERT_EQ(o[14], gx);
                ASSERT_EQ(o[15], x + 5);
            }
        }
    }
}

TEST(HostKernels, BarrierReductionForSeveralGroupSizes) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("local_reduce");
    ASSERT_TRUE(built.module);
    for (uint32_t size : {1u, 2u, 16u, 64u, 256u, 1024u}) {
        const uint32_t groups = 6;
        std::vector<uint32_t> in(size * groups), out(groups, 0);
        std::iota(in.begin(), in.end(), 1u);
        Args args;
        args.value(static_cast<const uint32_t*>(in.data())).value(out.data()).local(size * sizeof(uint32_t));
        std::string error;
        ASSERT_EQ(built.module->run(built.index("reduce_sum"), args.launch(), grid_1d(groups, size), &error),
                  ZE_RESULT_SUCCESS)
            << error;
        for (uint32_t g = 0; g < groups; ++g) {
            const uint32_t first = g * size + 1, last = (g + 1) * size;
            EXPECT_EQ(out[g], (first + last) * size / 2) << "size " << size << " group " << g;
        }
    }
    for (uint32_t size : {1u, 7u, 32u, 256u}) {
        std::vector<uint32_t> in(size * 3), out(size * 3, 0);
        std::iota(in.begin(), in.end(), 0u);
        Args args;
        args.value(static_cast<const uint32_t*>(in.data())).value(out.data());
        std::string error;
        ASSERT_EQ(built.module->run(built.index("reverse_in_group"), args.launch(), grid_1d(3, size), &error),
                  ZE_RESULT_SUCCESS)
            << error;
        for (uint32_t i = 0; i < size * 3; ++i) {
            ASSERT_EQ(out[i], (i / size) * size + (size - 1 - i % size)) << "size " << size;
        }
    }
}

TEST(HostKernels, TiledMatrixMultiply) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("matrix_multiply");
    ASSERT_TRUE(built.module);
    const int m = 48, k = 32, n = 64;
    std::vector<float> a(m * k), b(k * n), c(m * n, 0.0f);
    for (int i = 0; i < m * k; ++i) {
        a[i] = static_cast<float>(i % 7) - 3.0f;
    }
    for (int i = 0; i < k * n; ++i) {
        b[i] = static_cast<float>(i % 5) * 0.5f;
    }
    Args args;
    args.value(static_cast<const float*>(a.data())).value(static_cast<const float*>(b.data())).value(c.data());
    args.value(m).value(k).value(n);
    LaunchGrid grid;
    grid.group_count = {n / 16, m / 16, 1};
    grid.group_size = {16, 16, 1};
    std::string error;
    ASSERT_EQ(built.module->run(0, args.launch(), grid, &error), ZE_RESULT_SUCCESS) << error;
    for (int row = 0; row < m; ++row) {
        for (int col = 0; col < n; ++col) {
            float sum = 0;
            for (int i = 0; i < k; ++i) {
                sum += a[row * k + i] * b[i * n + col];
            }
            ASSERT_FLOAT_EQ(c[row * n + col], sum) << row << "," << col;
        }
    }
}

TEST(HostKernels, AtomicsUnderContention) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("atomics");
    ASSERT_TRUE(built.module);
    const uint32_t groups = 64, size = 32, items = groups * size;
    std::vector<int> counters{0, 0, 0, -1, 1 << 30, 0, -1, 0, 0};
    Args args;
    args.value(counters.data()).local(sizeof(int));
    std::string error;
    ASSERT_EQ(built.module->run(built.index("atomics_32"), args.launch(), grid_1d(groups, size), &error),
              ZE_RESULT_SUCCESS)
        << error;
    EXPECT_EQ(counters[0], 3 * static_cast<int>(items));
    EXPECT_EQ(counters[1], static_cast<int>(items));
    EXPECT_EQ(counters[2], -static_cast<int>(items));
    EXPECT_EQ(counters[3], static_cast<int>(items) - 1);
    EXPECT_EQ(counters[4], 0);
    EXPECT_EQ(counters[5], 0x7fffffff);
    EXPECT_GE(counters[6], 0);
    EXPECT_LT(counters[6], static_cast<int>(items));
    EXPECT_EQ(counters[7], 2 * static_cast<int>(items));
    EXPECT_EQ(counters[8], static_cast<int>(items));

    std::vector<uint64_t> wide{0, 0, 0};
    Args args64;
    args64.value(wide.data());
    ASSERT_EQ(built.module->run(built.index("atomics_64"), args64.launch(), grid_1d(groups, size), &error),
              ZE_RESULT_SUCCESS);
    uint64_t xor_all = 0;
    for (uint64_t i = 0; i < items; ++i) {
        xor_all ^= i;
    }
    EXPECT_EQ(wide[0], uint64_t{items} * (items - 1) / 2);
    EXPECT_EQ(wide[1], uint64_t{items - 1} << 33);
    EXPECT_EQ(wide[2], xor_all);

    std::vector<uint8_t> data(items);
    std::vector<uint32_t> expected(16, 0), bins(16, 0);
    for (uint32_t i = 0; i < items; ++i) {
        data[i] = static_cast<uint8_t>((i * 37) % 251);
        ++expected[data[i] % 16];
    }
    Args histogram;
    histogram.value(static_cast<const uint8_t*>(data.data())).value(bins.data());
    ASSERT_EQ(built.module->run(built.index("histogram"), histogram.launch(), grid_1d(groups, size), &error),
              ZE_RESULT_SUCCESS);
    EXPECT_EQ(bins, expected);
}

TEST(HostKernels, RequiredGroupSizeEmptyNotInlinedAndByValue) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("attributes");
    ASSERT_TRUE(built.module);
    std::vector<uint32_t> out(16 * 8, ~0u);
    Args args;
    args.value(out.data());
    LaunchGrid grid;
    grid.group_count = {2, 2, 1};
    grid.group_size = {8, 4, 1};
    std::string error;
    ASSERT_EQ(built.module->run(built.index("reqd_size"), args.launch(), grid, &error), ZE_RESULT_SUCCESS);
    for (uint32_t y = 0; y < 8; ++y) {
        for (uint32_t x = 0; x < 16; ++x) {
            ASSERT_EQ(out[y * 16 + x], (y % 4) * 8 + x % 8);
        }
    }
    Args none;
    ASSERT_EQ(built.module->run(built.index("empty"), none.launch(), grid_1d(1000, 64), &error), ZE_RESULT_SUCCESS);
    // A kernel the SPIR-V marks DontInline runs as any other.
    std::vector<int32_t> sevens(64, 0);
    Args not_inlined;
    not_inlined.value(sevens.data());
    ASSERT_EQ(built.module->run(built.index("not_inlined"), not_inlined.launch(), grid_1d(4, 16), &error),
              ZE_RESULT_SUCCESS);
    for (int i = 0; i < 64; ++i) {
        EXPECT_EQ(sevens[i], 7) << i;
    }
    struct Params {
        int32_t scale;
        float bias;
        int64_t offset;
    } params{3, 0.5f, 100};
    std::vector<float> values(32, 0);
    Args by_value;
    by_value.value(values.data()).value(params);
    ASSERT_EQ(built.module->run(built.index("by_value"), by_value.launch(), grid_1d(4, 8), &error), ZE_RESULT_SUCCESS);
    for (int i = 0; i < 32; ++i) {
        EXPECT_EQ(values[i], static_cast<float>(i % 8) * 3 + 0.5f + 100.0f);
    }
}

TEST(HostKernels, MathAndIntegerBuiltins) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("math_builtins");
    ASSERT_TRUE(built.module);
    const std::vector<float> in{-2.75f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 2.5f, 7.25f};
    std::vector<float> out(in.size() * 16, 0);
    Args args;
    args.value(in.data()).value(out.data());
    std::string error;
    ASSERT_EQ(built.module->run(built.index("float_builtins"), args.launch(), grid_1d(2, 4), &error), ZE_RESULT_SUCCESS)
        << error;
    for (size_t i = 0; i < in.size(); ++i) {
        const float x = in[i];
        const float* o = &out[i * 16];
        const float sign = x > 0 ? 1.0f : (x < 0 ? -1.0f : 0.0f);
        const float expected[16] = {std::sqrt(std::fabs(x)),
                                    std::fmin(x, 0.5f) + std::fmax(x, -0.5f),
                                    std::floor(x) + std::ceil(x) * 10.0f,
                                    std::exp(x * 0.1f),
                                    std::log(std::fabs(x) + 1.0f),
                                    std::sin(x) + std::cos(x),
                                    std::pow(std::fabs(x), 1.5f),
                                    (x * 2.0f + 1.0f) + std::fma(x, x, -1.0f),
                                    std::fmin(std::fmax(x, -1.0f), 1.0f),
                                    std::sqrt(std::fabs(x)) + 1.0f / std::sqrt(std::fabs(x) + 1.0f),
                                    std::tan(x * 0.1f) + std::atan2(x, 2.0f),
                                    std::fmin(x, 2.0f) + std::fmax(x, -2.0f),
                                    std::trunc(x) + std::round(x) * 10.0f,
                                    std::exp2(x * 0.1f) + std::log2(std::fabs(x) + 1.0f),
                                    std::copysign(1.0f, x) + sign * 10.0f,
                                    x + (1.0f - x) * 0.25f};
        for (int j = 0; j < 16; ++j) {
            EXPECT_NEAR(o[j], expected[j], 1e-4f * std::max(1.0f, std::fabs(expected[j]))) << "x=" << x << " j=" << j;
        }
    }
    const std::vector<int> ints{-100, -5, -1, 0, 1, 3, 12, 0x12345678};
    std::vector<int> int_out(ints.size() * 8, 0);
    Args int_args;
    int_args.value(ints.data()).value(int_out.data());
    ASSERT_EQ(built.module->run(built.index("int_builtins"), int_args.launch(), grid_1d(8, 1), &error),
              ZE_RESULT_SUCCESS);
    for (size_t i = 0; i < ints.size(); ++i) {
        const int x = ints[i];
        const int* o = &int_out[i * 8];
        // The kernel's int arithmetic wraps; the expectation wraps the same way, unsigned.
        EXPECT_EQ(o[0], static_cast<int>(static_cast<unsigned>(std::min(x, 7)) +
                                         static_cast<unsigned>(std::max(x, -7)) * 100u));
        EXPECT_EQ(o[1], std::clamp(x, -3, 3));
        EXPECT_EQ(o[2], std::abs(x));
        EXPECT_EQ(o[3], static_cast<int>(std::min(static_cast<unsigned>(x), 9u)));
        EXPECT_EQ(o[4], __builtin_popcount(static_cast<unsigned>(x)));
        EXPECT_EQ(o[5], x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x)));
        EXPECT_EQ(o[6], x * 3 + x * 2 + 1);
        const unsigned u = static_cast<unsigned>(x);
        EXPECT_EQ(o[7], static_cast<int>((u << 4) | (u >> 28)));
    }
    std::vector<float> vectors{1, -4, 9, 0.25f, -16, 2, 3, 4};
    std::vector<float> vector_out(8, 0), dots(2, 0);
    Args vector_args;
    vector_args.value(vectors.data()).value(vector_out.data()).value(dots.data());
    ASSERT_EQ(built.module->run(built.index("vector_builtins"), vector_args.launch(), grid_1d(2, 1), &error),
              ZE_RESULT_SUCCESS);
    for (int i = 0; i < 8; ++i) {
        EXPECT_FLOAT_EQ(vector_out[i], std::fmax(std::sqrt(std::fabs(vectors[i])), 0.5f));
    }
    EXPECT_FLOAT_EQ(dots[0], 1 + 16 + 81 + 0.0625f);
    EXPECT_FLOAT_EQ(dots[1], 256 + 4 + 9 + 16);
}

// Buffers of float4 aligned only to their float elements (as GPUs accept them): the
// kernel's vector loads and stores run on them without faulting.
TEST(HostKernels, VectorAccessesNeedOnlyElementAlignment) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("math_builtins");
    ASSERT_TRUE(built.module);
    alignas(64) float in_storage[9] = {0, 1, -4, 9, 0.25f, -16, 2, 3, 4};
    alignas(64) float out_storage[9] = {};
    std::vector<float> dots(2, 0);
    float* in = in_storage + 1;  // 4-byte aligned, not 16
    float* out = out_storage + 1;
    Args args;
    args.value(in).value(out).value(dots.data());
    std::string error;
    ASSERT_EQ(built.module->run(built.index("vector_builtins"), args.launch(), grid_1d(2, 1), &error),
              ZE_RESULT_SUCCESS)
        << error;
    for (int i = 0; i < 8; ++i) {
        EXPECT_FLOAT_EQ(out[i], std::fmax(std::sqrt(std::fabs(in[i])), 0.5f)) << i;
    }
    EXPECT_FLOAT_EQ(dots[1], 256 + 4 + 9 + 16);
}

TEST(HostKernels, RejectsArgumentsThatDoNotMatch) {
    ZEHAL_REQUIRE_COMPILER();
    auto built = build_host("buffers");
    ASSERT_TRUE(built.module);
    Args too_few;
    too_few.value(uint32_t{1});
    std::string error;
    EXPECT_EQ(built.module->run(built.index("add_float"), too_few.launch(), grid_1d(1, 1), &error),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    Args fill;
    std::vector<uint32_t> data(4);
    fill.value(data.data()).value(uint32_t{1});
    EXPECT_EQ(built.module->run(99, fill.launch(), grid_1d(1, 1), &error), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    LaunchGrid zero = grid_1d(1, 1);
    zero.group_count[1] = 0;
    EXPECT_EQ(built.module->run(built.index("fill_uint"), fill.launch(), zero, &error),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace zehal::compiler
