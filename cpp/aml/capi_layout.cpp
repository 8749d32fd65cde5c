// C API: generic aml_layout_* functions and dense layouts.
#include <span>

#include "common/api_call_log.hpp"
#include "aml/capi_handles.hpp"
#include "aml/layout/dense.h"

using zehal::aml::Layout;
using zehal::aml::thread_errno;
using zehal::aml::capi::guarded;
using zehal::aml::capi::layout_of;
using zehal::aml::capi::LayoutHandle;

namespace {

void* dense_deref(const aml_layout_data* data, const size_t* coords) {
    void* out = nullptr;
    if (int r = layout_of(data)->deref(coords, &out); r != AML_SUCCESS) {
        thread_errno() = -r;
        return nullptr;
    }
    return out;
}

void* dense_rawptr(const aml_layout_data* data) { return layout_of(data)->rawptr(); }

int dense_order(const aml_layout_data* data) { return layout_of(data)->order(); }

int dense_dims(const aml_layout_data* data, size_t* dims) {
    layout_of(data)->dims(dims);
    return AML_SUCCESS;
}

size_t dense_ndims(const aml_layout_data* data) { return layout_of(data)->ndims(); }

size_t dense_element_size(const aml_layout_data* data) { return layout_of(data)->element_size(); }

int dense_fprintf(const aml_layout_data* data, FILE* stream, const char* prefix) {
    layout_of(data)->describe(stream, prefix);
    return AML_SUCCESS;
}

void dense_destroy(aml_layout* layout) { delete static_cast<LayoutHandle*>(layout); }

// A usable layout: not null, with ops and data.
bool usable(const aml_layout* layout) { return layout && layout->ops && layout->data; }

}  // namespace

extern "C" {

struct aml_layout_ops aml_layout_dense_ops = {
    dense_deref, dense_rawptr, dense_order, dense_dims, dense_ndims, dense_element_size, dense_fprintf, dense_destroy,
};

int aml_layout_dense_create(struct aml_layout** layout, void* ptr, const int order, const size_t element_size,
                            const size_t ndims, const size_t* dims, const size_t* stride, const size_t* pitch) {
    ZEHAL_TIMED_API_CALL();
    if (!layout || !ptr || !dims || ndims == 0) return -AML_EINVAL;
    return guarded([&] {
        std::unique_ptr<Layout> impl;
        const std::span<const size_t> no;
        const int r = Layout::dense(ptr, order, element_size, {dims, ndims}, stride ? std::span(stride, ndims) : no,
                                    pitch ? std::span(pitch, ndims) : no, &impl);
        if (r != AML_SUCCESS) return r;
        auto* h = new LayoutHandle();
        h->ops = &aml_layout_dense_ops;
        h->data = reinterpret_cast<aml_layout_data*>(impl.get());
        h->impl = std::move(impl);
        *layout = h;
        return AML_SUCCESS;
    });
}

void* aml_layout_deref(const struct aml_layout* layout, const size_t* coords) {
    ZEHAL_TIMED_API_CALL();
    if (!usable(layout) || !layout->ops->deref || !coords) {
        thread_errno() = AML_EINVAL;
        return nullptr;
    }
    return layout->ops->deref(layout->data, coords);
}

void* aml_layout_deref_safe(const struct aml_layout* layout, const size_t* coords) {
    ZEHAL_TIMED_API_CALL();
    return aml_layout_deref(layout, coords);
}

void* aml_layout_rawptr(const struct aml_layout* layout) {
    ZEHAL_TIMED_API_CALL();
    if (!usable(layout) || !layout->ops->rawptr) {
        thread_errno() = AML_EINVAL;
        return nullptr;
    }
    return layout->ops->rawptr(layout->data);
}

int aml_layout_order(const struct aml_layout* layout) {
    ZEHAL_TIMED_API_CALL();
    if (!usable(layout) || !layout->ops->order) return -AML_EINVAL;
    return layout->ops->order(layout->data);
}

int aml_layout_dims(const struct aml_layout* layout, size_t* dims) {
    ZEHAL_TIMED_API_CALL();
    if (!usable(layout) || !layout->ops->dims || !dims) return -AML_EINVAL;
    return layout->ops->dims(layout->data, dims);
}

size_t aml_layout_ndims(const struct aml_layout* layout) {
    ZEHAL_TIMED_API_CALL();
    if (!usable(layout) || !layout->ops->ndims) {
        thread_errno() = AML_EINVAL;
        return 0;
    }
    return layout->ops->ndims(layout->data);
}

size_t aml_layout_element_size(const struct aml_layout* layout) {
    ZEHAL_TIMED_API_CALL();
    if (!usable(layout) || !layout->ops->element_size) {
        thread_errno() = AML_EINVAL;
        return 0;
    }
    return layout->ops->element_size(layout->data);
}

int aml_layout_fprintf(FILE* stream, const char* prefix, const struct aml_layout* layout) {
    ZEHAL_TIMED_API_CALL();
    if (!stream || !layout) return -AML_EINVAL;
    const char* p = prefix ? prefix : "";
    if (!usable(layout) || !layout->ops->fprintf) {
        std::fprintf(stream, "%slayout: %p\n", p, static_cast<const void*>(layout));
        return AML_SUCCESS;
    }
    return layout->ops->fprintf(layout->data, stream, p);
}

void aml_layout_destroy(struct aml_layout** layout) {
    ZEHAL_TIMED_API_CALL();
    if (!layout || !*layout) return;
    if ((*layout)->ops && (*layout)->ops->destroy) (*layout)->ops->destroy(*layout);
    *layout = nullptr;
}

}  // extern "C"
