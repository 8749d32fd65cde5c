// Level Zero structure chains: every extensible structure starts with (stype, pNext), and a
// caller strings extension structures through pNext. The driver fills or reads the ones it
// knows and leaves the others untouched. A chain is followed from a structure whose own
// stype is one the function expects; from one whose stype is 0 (value-initialised,
// `T x = {}`, with only pNext set, as much C++ code writes) only through reads that cannot
// fault; never from any other: an output structure the caller left uninitialised (stype
// and pNext both garbage) is filled, never walked.
#pragma once

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string_view>

#include <level_zero/ze_api.h>

namespace zehal::ze_driver {

// The header every chained structure starts with.
struct ChainLink {
    uint32_t stype;
    const ChainLink* next;
};

// The first structure of type `stype` in the chain starting at `next` (a pNext value);
// null when absent. Links of other types are skipped. A chain longer than any real one is
// taken as a loop and cut.
inline const ChainLink* find_link(const void* next, uint32_t stype) {
    constexpr int kMaxLinks = 64;
    const auto* link = static_cast<const ChainLink*>(next);
    for (int i = 0; link && i < kMaxLinks; ++i, link = link->next)
        if (link->stype == stype) return link;
    return nullptr;
}

// find_link over a chain that may be garbage (from a head whose stype is 0, which an
// uninitialised structure may hold too): each link is copied with process_vm_readv from
// this process, which fails on memory that is unmapped or unreadable instead of faulting,
// and the walk stops there.
inline const ChainLink* find_link_guarded(const void* next, uint32_t stype) {
    constexpr int kMaxLinks = 64;
    const auto* link = static_cast<const ChainLink*>(next);
    for (int i = 0; link && i < kMaxLinks; ++i) {
        if (reinterpret_cast<uintptr_t>(link) % alignof(ChainLink) != 0) return nullptr;
        ChainLink copy{};
        iovec local{&copy, sizeof copy};
        iovec remote{const_cast<ChainLink*>(link), sizeof copy};
        if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof copy)) return nullptr;
        if (copy.stype == stype) return link;
        link = copy.next;
    }
    return nullptr;
}

// The stype `s` holds, as an integer. Read as bytes: an uninitialised structure's stype may
// hold a value outside ze_structure_type_t's range, and loading such a value as the enum is
// undefined behaviour.
template <typename S>
uint32_t stype_of(const S* s) {
    uint32_t v = 0;
    static_assert(sizeof s->stype == sizeof v, "stype is a 32-bit enumeration");
    std::memcpy(&v, &s->stype, sizeof v);
    return v;
}

// Whether `head`'s own stype is one of `expected`: only then is its pNext a chain to follow.
template <typename Head>
bool has_stype(const Head* head, std::initializer_list<uint32_t> expected) {
    const uint32_t own = stype_of(head);
    return std::find(expected.begin(), expected.end(), own) != expected.end();
}

// The chained structure `T` of type `stype` after `head`, writable for output chains; null
// when absent, or when `head`'s stype is neither one of `head_stypes` nor 0 (its pNext is
// not followed). From a head of stype 0 the chain is walked guarded (find_link_guarded).
template <typename T, typename Head>
T* find_in_chain(Head* head, std::initializer_list<uint32_t> head_stypes, uint32_t stype) {
    const ChainLink* link = has_stype(head, head_stypes) ? find_link(head->pNext, stype)
                            : stype_of(head) == 0        ? find_link_guarded(head->pNext, stype)
                                                         : nullptr;
    return reinterpret_cast<T*>(const_cast<ChainLink*>(link));
}

// Copies `text` into a fixed char array, cut to fit and always terminated.
template <size_t N>
void copy_name(char (&dst)[N], std::string_view text) {
    const size_t n = std::min(text.size(), N - 1);
    std::memcpy(dst, text.data(), n);
    dst[n] = '\0';
}

// Level Zero's count protocol over `total` items: *count 0 (or no output array) asks the
// total; else at most *count items are written by `put(i)` and *count becomes that number.
template <typename Put>
ze_result_t hand_out(uint32_t* count, bool have_out, uint32_t total, Put&& put) {
    if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*count == 0 || !have_out) {
        *count = total;
        return ZE_RESULT_SUCCESS;
    }
    *count = std::min(*count, total);
    for (uint32_t i = 0; i < *count; ++i) put(i);
    return ZE_RESULT_SUCCESS;
}

// Level Zero's string protocol: no buffer (or *size 0) asks the size with the terminating
// NUL; else at most *size bytes are written, always terminated, and *size becomes that count.
inline ze_result_t hand_out_string(std::string_view text, size_t* size, char* out) {
    if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!out || *size == 0) {
        *size = text.size() + 1;
        return ZE_RESULT_SUCCESS;
    }
    const size_t n = std::min(text.size(), *size - 1);
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
    *size = n + 1;
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::ze_driver
