// Copies beyond one linear range: a box of rows and slices between two pitched layouts
// (region copies), and a copy whose source belongs to another context.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "command_list.hpp"
#include "dispatch.hpp"
#include "objects.hpp"
#include "common/c_boundary.hpp"

namespace zehal::ze_driver {
namespace {

// Runs `f` on the command list of `hCommandList`.
template <typename F>
ze_result_t with_list(ze_command_list_handle_t hCommandList, F&& f) {
    return ze_guarded([&] {
        std::shared_ptr<CommandListObject> list;
        if (ze_result_t r = command_lists().get(hCommandList, &list); r != ZE_RESULT_SUCCESS) return r;
        return f(*list);
    });
}

// One side of a region copy: a pointer, the box's place in its layout, and the layout's
// row and slice pitches in bytes.
struct Side {
    const char* base;
    const ze_copy_region_t* region;
    uint64_t pitch;
    uint64_t slice_pitch;
};

// The byte offset of row `y` of slice `z` of the box (both relative to its origin).
uint64_t row_offset(const Side& s, uint64_t y, uint64_t z) {
    return (s.region->originZ + z) * s.slice_pitch + (s.region->originY + y) * s.pitch + s.region->originX;
}

// a * b + c into `out`; false when that does not fit 64 bits.
bool mul_add(uint64_t a, uint64_t b, uint64_t c, uint64_t* out) {
    return !__builtin_mul_overflow(a, b, out) && !__builtin_add_overflow(*out, c, out);
}

// Checks one side: rows fit their pitch and slices their slice pitch wherever a pitch
// places anything (a single row needs no row pitch, a single slice no slice pitch), the
// box's end is addressable, and the box lies inside the allocation when the driver knows
// the pointer.
ze_result_t check_side(const Side& s) {
    const ze_copy_region_t& r = *s.region;
    const uint64_t row_end = uint64_t{r.originX} + r.width;
    if ((r.height > 1 || r.originY > 0) && s.pitch < row_end) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    uint64_t slice_end = 0, end = 0;
    if (!mul_add(uint64_t{r.originY} + r.height - 1, s.pitch, row_end, &slice_end))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if ((r.depth > 1 || r.originZ > 0) && s.slice_pitch < slice_end) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!mul_add(uint64_t{r.originZ} + r.depth - 1, s.slice_pitch, slice_end, &end) ||
        end > static_cast<uint64_t>(PTRDIFF_MAX) - reinterpret_cast<uintptr_t>(s.base))
        return ZE_RESULT_ERROR_INVALID_SIZE;
    hal::PointerInfo info;
    if (!owner_of(s.base, &info)) return ZE_RESULT_SUCCESS;  // memory the copy itself judges
    const auto available = static_cast<uint64_t>(static_cast<const char*>(info.base) + info.size - s.base);
    return end <= available ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_SIZE;
}

// The linear copies of a region copy, in order: one per row, or one per slice where both
// sides' rows are contiguous, or one in all where their slices are too.
std::vector<Command> row_copies(const Side& dst, const Side& src) {
    const ze_copy_region_t& r = *src.region;
    const bool rows_packed = dst.pitch == r.width && src.pitch == r.width;
    const uint64_t slice_bytes = uint64_t{r.width} * r.height;
    const bool slices_packed = rows_packed &&
                               (r.depth == 1 || (dst.slice_pitch == slice_bytes && src.slice_pitch == slice_bytes));
    std::vector<Command> copies;
    auto add = [&](uint64_t y, uint64_t z, uint64_t bytes) {
        Command c;
        c.kind = Command::Kind::copy;
        c.dst = const_cast<char*>(dst.base) + row_offset(dst, y, z);
        c.src = src.base + row_offset(src, y, z);
        c.size = bytes;
        copies.push_back(std::move(c));
    };
    if (slices_packed) {
        add(0, 0, slice_bytes * r.depth);
        return copies;
    }
    for (uint64_t z = 0; z < r.depth; ++z) {
        if (rows_packed) {
            add(0, z, slice_bytes);
            continue;
        }
        for (uint64_t y = 0; y < r.height; ++y) add(y, z, r.width);
    }
    return copies;
}

// `r` as a box: depth 0 is a two-dimensional region, one slice, as Level Zero programs
// write one.
ze_copy_region_t as_box(const ze_copy_region_t& r) {
    ze_copy_region_t box = r;
    if (box.depth == 0) box.depth = 1;
    return box;
}

// A region copy is its linear copies queued in order on the list: the first waits for the
// wait list, the last signals the event. Operands, pitches and bounds are checked before
// anything is appended. An empty box (zero width or height) copies nothing: its events are those
// of a barrier in its place, whatever the pointers and pitches.
ze_result_t zeCommandListAppendMemoryCopyRegion_(ze_command_list_handle_t hCommandList, void* dstptr,
                                                 const ze_copy_region_t* dstRegion, uint32_t dstPitch,
                                                 uint32_t dstSlicePitch, const void* srcptr,
                                                 const ze_copy_region_t* srcRegion, uint32_t srcPitch,
                                                 uint32_t srcSlicePitch, ze_event_handle_t hSignalEvent,
                                                 uint32_t numWaitEvents, ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        if (!dstptr || !srcptr || !dstRegion || !srcRegion) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        const ze_copy_region_t dst_box = as_box(*dstRegion), src_box = as_box(*srcRegion);
        if (dst_box.width != src_box.width || dst_box.height != src_box.height || dst_box.depth != src_box.depth)
            return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        hal::EventRef signal;
        std::vector<hal::EventRef> waits;
        if (ze_result_t r = optional_event(hSignalEvent, &signal); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = wait_list(numWaitEvents, phWaitEvents, &waits); r != ZE_RESULT_SUCCESS) return r;
        std::vector<Command> copies;
        if (src_box.width == 0 || src_box.height == 0) {
            copies.emplace_back();  // nothing to copy: a barrier that waits and signals
        } else {
            const Side dst{static_cast<const char*>(dstptr), &dst_box, dstPitch, dstSlicePitch};
            const Side src{static_cast<const char*>(srcptr), &src_box, srcPitch, srcSlicePitch};
            if (ze_result_t r = check_side(dst); r != ZE_RESULT_SUCCESS) return r;
            if (ze_result_t r = check_side(src); r != ZE_RESULT_SUCCESS) return r;
            copies = row_copies(dst, src);
        }
        copies.front().waits = std::move(waits);
        copies.back().signal = std::move(signal);
        for (Command& c : copies)
            if (ze_result_t r = l.append(std::move(c)); r != ZE_RESULT_SUCCESS) return r;
        return ZE_RESULT_SUCCESS;
    });
}

// Every context of the driver reaches every allocation (memory belongs to devices, not to
// contexts), so a copy from another context's memory is a plain copy once that context is
// known to be live.
ze_result_t zeCommandListAppendMemoryCopyFromContext_(ze_command_list_handle_t hCommandList, void* dstptr,
                                                      ze_context_handle_t hContextSrc, const void* srcptr, size_t size,
                                                      ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                      ze_event_handle_t* phWaitEvents) {
    return with_list(hCommandList, [&](CommandListObject& l) {
        std::shared_ptr<ContextObject> context;
        if (ze_result_t r = contexts().get(hContextSrc, &context); r != ZE_RESULT_SUCCESS) return r;
        if (!dstptr || !srcptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
        Command c;
        c.kind = Command::Kind::copy;
        c.dst = dstptr;
        c.src = srcptr;
        c.size = size;
        if (ze_result_t r = optional_event(hSignalEvent, &c.signal); r != ZE_RESULT_SUCCESS) return r;
        if (ze_result_t r = wait_list(numWaitEvents, phWaitEvents, &c.waits); r != ZE_RESULT_SUCCESS) return r;
        return l.append(std::move(c));
    });
}

const Entry kEntries[] = {
    ZEHAL_ENTRY(zeCommandListAppendMemoryCopyRegion, zeCommandListAppendMemoryCopyRegion_),
    ZEHAL_ENTRY(zeCommandListAppendMemoryCopyFromContext, zeCommandListAppendMemoryCopyFromContext_),
};

}  // namespace

std::span<const Entry> region_copy_entries() { return kEntries; }

}  // namespace zehal::ze_driver
