// Dense layouts: creation checks, column- and row-major addressing, stride, pitch, bounds,
// and the generic aml_layout_* functions on bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "aml.h"
#include "aml/layout.hpp"
#include "aml/layout/dense.h"

namespace {

struct LayoutGuard {
    aml_layout* layout = nullptr;
    ~LayoutGuard() { aml_layout_destroy(&layout); }
};

TEST(DenseLayout, CreateRejectsBadArguments) {
    double buf[64];
    const size_t dims[2] = {4, 8};
    const size_t zero_dim[2] = {4, 0};
    const size_t small_pitch[2] = {3, 8};
    aml_layout* l = nullptr;
    EXPECT_EQ(aml_layout_dense_create(nullptr, buf, AML_LAYOUT_ORDER_C, 8, 2, dims, nullptr, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_layout_dense_create(&l, nullptr, AML_LAYOUT_ORDER_C, 8, 2, dims, nullptr, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 8, 2, nullptr, nullptr, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 0, 2, dims, nullptr, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 8, 0, dims, nullptr, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 8, 2, zero_dim, nullptr, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 8, 2, dims, nullptr, small_pitch), -AML_EINVAL);
    EXPECT_EQ(aml_layout_dense_create(&l, buf, 7, 8, 2, dims, nullptr, nullptr), -AML_EINVAL);
    const size_t huge[2] = {SIZE_MAX / 2, 4};
    EXPECT_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, 8, 2, huge, nullptr, nullptr), -AML_EINVAL);
    EXPECT_EQ(l, nullptr);  // untouched on failure
}

TEST(DenseLayout, RowMajorMakesTheLastDimensionContiguous) {
    double buf[4 * 8];
    const size_t dims[2] = {4, 8};
    LayoutGuard g;
    ASSERT_EQ(
        aml_layout_dense_create(&g.layout, buf, AML_LAYOUT_ORDER_ROW_MAJOR, sizeof(double), 2, dims, nullptr, nullptr),
        AML_SUCCESS);
    for (size_t i = 0; i < 4; ++i)
        for (size_t j = 0; j < 8; ++j) {
            const size_t c[2] = {i, j};
            EXPECT_EQ(aml_layout_deref(g.layout, c), &buf[i * 8 + j]);
        }
    EXPECT_EQ(aml_layout_order(g.layout), AML_LAYOUT_ORDER_ROW_MAJOR);
    EXPECT_EQ(aml_layout_ndims(g.layout), 2u);
    EXPECT_EQ(aml_layout_element_size(g.layout), sizeof(double));
    EXPECT_EQ(aml_layout_rawptr(g.layout), buf);
    size_t out[2] = {0, 0};
    ASSERT_EQ(aml_layout_dims(g.layout, out), AML_SUCCESS);
    EXPECT_EQ(out[0], 4u);
    EXPECT_EQ(out[1], 8u);
}

TEST(DenseLayout, ColumnMajorMakesTheFirstDimensionContiguous) {
    float buf[3 * 5];
    const size_t dims[2] = {3, 5};
    LayoutGuard g;
    ASSERT_EQ(aml_layout_dense_create(&g.layout, buf, AML_LAYOUT_ORDER_COLUMN_MAJOR, sizeof(float), 2, dims, nullptr,
                                      nullptr),
              AML_SUCCESS);
    for (size_t i = 0; i < 3; ++i)
        for (size_t j = 0; j < 5; ++j) {
            const size_t c[2] = {i, j};
            EXPECT_EQ(aml_layout_deref(g.layout, c), &buf[i + j * 3]);
        }
    EXPECT_EQ(aml_layout_order(g.layout), AML_LAYOUT_ORDER_COLUMN_MAJOR);
    size_t out[2];
    ASSERT_EQ(aml_layout_dims(g.layout, out), AML_SUCCESS);
    EXPECT_EQ(out[0], 3u);
    EXPECT_EQ(out[1], 5u);
}

TEST(DenseLayout, StrideAndPitchAddressASubarray) {
    // A 2 x 3 row-major view of every other column of a 4 x 10 array of ints.
    int buf[4 * 10];
    const size_t dims[2] = {2, 3};
    const size_t stride[2] = {1, 2};
    const size_t pitch[2] = {4, 10};
    LayoutGuard g;
    ASSERT_EQ(aml_layout_dense_create(&g.layout, buf, AML_LAYOUT_ORDER_ROW_MAJOR, sizeof(int), 2, dims, stride, pitch),
              AML_SUCCESS);
    for (size_t i = 0; i < 2; ++i)
        for (size_t j = 0; j < 3; ++j) {
            const size_t c[2] = {i, j};
            EXPECT_EQ(aml_layout_deref(g.layout, c), &buf[i * 10 + j * 2]);
        }
    // Three dimensions, column-major, pitch larger than dims.
    char bytes[5 * 4 * 3];
    const size_t d3[3] = {2, 3, 2};
    const size_t p3[3] = {5, 4, 3};
    LayoutGuard g3;
    ASSERT_EQ(aml_layout_dense_create(&g3.layout, bytes, AML_LAYOUT_ORDER_COLUMN_MAJOR, 1, 3, d3, nullptr, p3),
              AML_SUCCESS);
    const size_t c[3] = {1, 2, 1};
    EXPECT_EQ(aml_layout_deref(g3.layout, c), &bytes[1 + 2 * 5 + 1 * 5 * 4]);
}

TEST(DenseLayout, DerefOutOfBoundsIsEdom) {
    int buf[12];
    const size_t dims[2] = {3, 4};
    LayoutGuard g;
    ASSERT_EQ(aml_layout_dense_create(&g.layout, buf, AML_LAYOUT_ORDER_C, sizeof(int), 2, dims, nullptr, nullptr),
              AML_SUCCESS);
    aml_errno = AML_SUCCESS;
    const size_t row_out[2] = {3, 0};
    EXPECT_EQ(aml_layout_deref(g.layout, row_out), nullptr);
    EXPECT_EQ(aml_errno, AML_EDOM);
    aml_errno = AML_SUCCESS;
    const size_t col_out[2] = {0, 4};
    EXPECT_EQ(aml_layout_deref_safe(g.layout, col_out), nullptr);
    EXPECT_EQ(aml_errno, AML_EDOM);
    const size_t last[2] = {2, 3};
    EXPECT_EQ(aml_layout_deref(g.layout, last), &buf[11]);
}

TEST(DenseLayout, GenericFunctionsRefuseNull) {
    const size_t c[1] = {0};
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_layout_deref(nullptr, c), nullptr);
    EXPECT_EQ(aml_errno, AML_EINVAL);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_layout_rawptr(nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_EINVAL);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_layout_ndims(nullptr), 0u);
    EXPECT_EQ(aml_errno, AML_EINVAL);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_layout_element_size(nullptr), 0u);
    EXPECT_EQ(aml_errno, AML_EINVAL);
    EXPECT_EQ(aml_layout_order(nullptr), -AML_EINVAL);
    size_t dims[1];
    EXPECT_EQ(aml_layout_dims(nullptr, dims), -AML_EINVAL);
    EXPECT_EQ(aml_layout_fprintf(stdout, "", nullptr), -AML_EINVAL);
    aml_layout_destroy(nullptr);
    aml_layout* none = nullptr;
    aml_layout_destroy(&none);

    int buf[4];
    const size_t d[1] = {4};
    LayoutGuard g;
    ASSERT_EQ(aml_layout_dense_create(&g.layout, buf, AML_LAYOUT_ORDER_C, sizeof(int), 1, d, nullptr, nullptr),
              AML_SUCCESS);
    aml_errno = AML_SUCCESS;
    EXPECT_EQ(aml_layout_deref(g.layout, nullptr), nullptr);
    EXPECT_EQ(aml_errno, AML_EINVAL);
    EXPECT_EQ(aml_layout_dims(g.layout, nullptr), -AML_EINVAL);
    EXPECT_EQ(aml_layout_fprintf(nullptr, "", g.layout), -AML_EINVAL);
}

TEST(DenseLayout, DestroySetsNullAndFprintfDescribes) {
    int buf[6];
    const size_t d[2] = {2, 3};
    aml_layout* l = nullptr;
    ASSERT_EQ(aml_layout_dense_create(&l, buf, AML_LAYOUT_ORDER_C, sizeof(int), 2, d, nullptr, nullptr), AML_SUCCESS);
    char text[512] = {0};
    FILE* f = fmemopen(text, sizeof text - 1, "w");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(aml_layout_fprintf(f, "> ", l), AML_SUCCESS);
    std::fclose(f);
    EXPECT_NE(std::strstr(text, "> layout: dense"), nullptr);
    EXPECT_NE(std::strstr(text, "> dims: 2 3"), nullptr);
    EXPECT_NE(std::strstr(text, "row-major"), nullptr);
    aml_layout_destroy(&l);
    EXPECT_EQ(l, nullptr);
}

TEST(DenseLayout, CppLayoutReportsExtentAndContiguity) {
    std::vector<char> buf(1000);
    std::unique_ptr<zehal::aml::Layout> l;
    const size_t dims[2] = {3, 4};
    ASSERT_EQ(zehal::aml::Layout::dense(buf.data(), zehal::aml::Layout::kRowMajor, 2, dims, {}, {}, &l), AML_SUCCESS);
    EXPECT_EQ(l->elements(), 12u);
    EXPECT_EQ(l->extent_bytes(), 24u);
    EXPECT_TRUE(l->contiguous());
    EXPECT_EQ(l->dims(), (std::vector<size_t>{3, 4}));
    EXPECT_EQ(l->native_dims(), (std::vector<size_t>{4, 3}));

    // Every other element of rows of 8: element (i, j) at 2 * (8 i + 2 j) bytes.
    const size_t stride[2] = {1, 2};
    const size_t pitch[2] = {3, 8};
    ASSERT_EQ(zehal::aml::Layout::dense(buf.data(), zehal::aml::Layout::kRowMajor, 2, dims, stride, pitch, &l),
              AML_SUCCESS);
    EXPECT_FALSE(l->contiguous());
    EXPECT_EQ(l->extent_bytes(), 2u * (8 * 2 + 2 * 3) + 2u);  // last element (2, 3), plus its size

    const size_t short_stride[1] = {1};
    EXPECT_EQ(zehal::aml::Layout::dense(buf.data(), zehal::aml::Layout::kRowMajor, 2, dims, short_stride, {}, &l),
              -AML_EINVAL);
    void* p = nullptr;
    const size_t three[3] = {0, 0, 0};
    EXPECT_EQ(l->deref(std::span<const size_t>(three, 3), &p), -AML_EINVAL);
}

}  // namespace
