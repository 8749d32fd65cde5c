#include "aml/layout.hpp"

#include <algorithm>

#include "aml/utils/error.h"

namespace zehal::aml {

namespace {

// a * b into *out; false on overflow.
bool mul(size_t a, size_t b, size_t* out) { return !__builtin_mul_overflow(a, b, out); }

bool add(size_t a, size_t b, size_t* out) { return !__builtin_add_overflow(a, b, out); }

// `v` in native order: reversed for row-major layouts.
std::vector<size_t> to_native(std::span<const size_t> v, int order) {
    std::vector<size_t> out(v.begin(), v.end());
    if (order == Layout::kRowMajor) std::reverse(out.begin(), out.end());
    return out;
}

}  // namespace

int Layout::dense(void* ptr, int order, size_t element_size, std::span<const size_t> dims,
                  std::span<const size_t> stride, std::span<const size_t> pitch, std::unique_ptr<Layout>* out) {
    if (!out || !ptr || element_size == 0 || dims.empty()) return -AML_EINVAL;
    if (order != kColumnMajor && order != kRowMajor) return -AML_EINVAL;
    if (!stride.empty() && stride.size() != dims.size()) return -AML_EINVAL;
    if (!pitch.empty() && pitch.size() != dims.size()) return -AML_EINVAL;
    for (size_t i = 0; i < dims.size(); ++i) {
        if (dims[i] == 0) return -AML_EINVAL;
        if (!pitch.empty() && pitch[i] < dims[i]) return -AML_EINVAL;
    }

    std::unique_ptr<Layout> l(new Layout());
    l->ptr_ = ptr;
    l->order_ = order;
    l->element_size_ = element_size;
    l->dims_ = to_native(dims, order);
    l->stride_ = stride.empty() ? std::vector<size_t>(dims.size(), 1) : to_native(stride, order);
    l->pitch_ = pitch.empty() ? l->dims_ : to_native(pitch, order);

    const size_t n = l->dims_.size();
    l->cpitch_.resize(n + 1);
    l->cpitch_[0] = element_size;
    size_t elements = 1;
    size_t last = 0;  // byte offset of the last element
    for (size_t i = 0; i < n; ++i) {
        if (!mul(l->cpitch_[i], l->pitch_[i], &l->cpitch_[i + 1])) return -AML_EINVAL;
        if (!mul(elements, l->dims_[i], &elements)) return -AML_EINVAL;
        size_t step = 0;
        size_t span = 0;
        if (!mul(l->stride_[i], l->cpitch_[i], &step) || !mul(l->dims_[i] - 1, step, &span) || !add(last, span, &last))
            return -AML_EINVAL;
    }
    size_t extent = 0;
    if (!add(last, element_size, &extent)) return -AML_EINVAL;
    l->elements_ = elements;
    l->extent_ = extent;
    *out = std::move(l);
    return AML_SUCCESS;
}

int Layout::deref(std::span<const size_t> coords, void** out) const {
    if (!out || coords.size() != dims_.size()) return -AML_EINVAL;
    return deref(coords.data(), out);
}

int Layout::deref(const size_t* coords, void** out) const {
    if (!out || !coords) return -AML_EINVAL;
    const size_t n = dims_.size();
    size_t offset = 0;
    for (size_t i = 0; i < n; ++i) {
        // Native dimension i is user dimension i (column-major) or n-1-i (row-major).
        const size_t c = order_ == kRowMajor ? coords[n - 1 - i] : coords[i];
        if (c >= dims_[i]) return -AML_EDOM;
        offset += c * stride_[i] * cpitch_[i];  // bounded by extent_, checked at creation
    }
    *out = static_cast<char*>(ptr_) + offset;
    return AML_SUCCESS;
}

std::vector<size_t> Layout::dims() const {
    std::vector<size_t> out(dims_.size());
    dims(out.data());
    return out;
}

void Layout::dims(size_t* out) const noexcept {
    const size_t n = dims_.size();
    for (size_t i = 0; i < n; ++i) out[i] = order_ == kRowMajor ? dims_[n - 1 - i] : dims_[i];
}

bool Layout::contiguous() const noexcept {
    const size_t n = dims_.size();
    for (size_t i = 0; i < n; ++i) {
        if (stride_[i] != 1) return false;
        if (i + 1 < n && pitch_[i] != dims_[i]) return false;
    }
    return true;
}

void Layout::describe(FILE* stream, const char* prefix) const {
    const char* p = prefix ? prefix : "";
    std::fprintf(stream, "%slayout: dense\n", p);
    std::fprintf(stream, "%sorder: %s\n", p, order_ == kRowMajor ? "row-major" : "column-major");
    std::fprintf(stream, "%selement size: %zu\n", p, element_size_);
    std::fprintf(stream, "%sptr: %p\n", p, ptr_);
    const std::vector<size_t> user_dims = dims();
    std::fprintf(stream, "%sdims:", p);
    for (size_t d : user_dims) std::fprintf(stream, " %zu", d);
    std::fprintf(stream, "\n");
}

}  // namespace zehal::aml
