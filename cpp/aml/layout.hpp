// Dense layouts (contract §2.3): dims, element size, order, stride and pitch over a pointer.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <span>
#include <vector>

namespace zehal::aml {

// A dense multi-dimensional array over memory it does not own. Dimensions are kept
// column-major inside (native dimension 0 is contiguous); a row-major layout stores the
// user's dimensions reversed. Immutable after creation, so every method is thread-safe.
// Results are AML codes (0 or -AML_E*), as the layer's C API returns them.
class Layout {
public:
    static constexpr int kColumnMajor = 0;  // AML_LAYOUT_ORDER_COLUMN_MAJOR
    static constexpr int kRowMajor = 1;     // AML_LAYOUT_ORDER_ROW_MAJOR

    // A dense layout over `ptr`: -AML_EINVAL for a null ptr, an unknown order, a zero
    // element size, no dimension, a zero dim, a stride or pitch array whose size is not
    // the number of dims, a pitch smaller than its dim, or a size that overflows.
    // Empty `stride` means 1s, empty `pitch` means dims (all in user order).
    static int dense(void* ptr, int order, size_t element_size, std::span<const size_t> dims,
                     std::span<const size_t> stride, std::span<const size_t> pitch, std::unique_ptr<Layout>* out);

    // Address of the element at `coords` (user order) into *out; -AML_EINVAL when the
    // number of coordinates is not ndims(), -AML_EDOM when one is out of its dimension.
    int deref(std::span<const size_t> coords, void** out) const;
    // The same with ndims() coordinates read from `coords`, for the C API.
    int deref(const size_t* coords, void** out) const;

    void* rawptr() const noexcept { return ptr_; }
    int order() const noexcept { return order_; }
    size_t ndims() const noexcept { return dims_.size(); }
    size_t element_size() const noexcept { return element_size_; }
    // Dimensions in user order.
    std::vector<size_t> dims() const;
    // Writes the ndims() dimensions, user order, into `out`.
    void dims(size_t* out) const noexcept;
    // Native (column-major) dimensions, strides and pitches.
    const std::vector<size_t>& native_dims() const noexcept { return dims_; }
    const std::vector<size_t>& native_stride() const noexcept { return stride_; }
    const std::vector<size_t>& native_pitch() const noexcept { return pitch_; }

    // Number of elements (product of the dims).
    size_t elements() const noexcept { return elements_; }
    // Bytes from rawptr() to the end of the last element.
    size_t extent_bytes() const noexcept { return extent_; }
    // True when the elements are packed without gaps (unit strides, pitches equal to
    // dims except the outermost), so element_size() x elements() bytes at rawptr() hold them.
    bool contiguous() const noexcept;

    // Describes the layout, every line starting with `prefix`.
    void describe(FILE* stream, const char* prefix) const;

private:
    Layout() = default;

    void* ptr_ = nullptr;
    int order_ = kColumnMajor;
    size_t element_size_ = 0;
    std::vector<size_t> dims_;    // native order
    std::vector<size_t> stride_;  // native order, elements
    std::vector<size_t> pitch_;   // native order, elements
    std::vector<size_t> cpitch_;  // bytes between consecutive indices of each native dim
    size_t elements_ = 0;
    size_t extent_ = 0;
};

}  // namespace zehal::aml
