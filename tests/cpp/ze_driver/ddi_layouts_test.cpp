// The driver's dispatch-table layouts (cpp/ze_driver/ddi_layouts.inc) against the Level Zero
// headers the build has (ZEHAL_LEVEL_ZERO_DDI_INCLUDE_DIR, the newest available): every
// member the headers declare sits, by offsetof in the headers' *_dditable_t struct, at the
// slot ddi_layouts.inc lists it in, in the table of the same getter. Two members swapped,
// one left out or one inserted in the wrong place move a slot and fail here. Members newer
// than the headers cannot be checked and are counted as such.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ze_ddi.h>
#include <zes_ddi.h>
#include <zet_ddi.h>

namespace {

// One line of ddi_layouts.inc: a table's getter (minor kTable) or one of its members.
struct Line {
    std::string_view name;
    uint32_t minor;
};
constexpr uint32_t kTable = ~0u;

constexpr Line kLayouts[] = {
#define ZEHAL_DDI_TABLE(getter) {#getter, kTable},
#define ZEHAL_DDI_MEMBER(function, minor) {#function, minor},
#define ZEHAL_DDI_TABLE_END()
#include "ddi_layouts.inc"
#undef ZEHAL_DDI_TABLE
#undef ZEHAL_DDI_MEMBER
#undef ZEHAL_DDI_TABLE_END
};

// One member of a header's dispatch table: its getter, function and byte offset.
struct HeaderSlot {
    std::string_view getter;
    std::string_view function;
    size_t offset;
};

constexpr HeaderSlot kHeaderSlots[] = {
#define ZEHAL_DDI_HEADER_SLOT(getter, type, member, function) {#getter, #function, offsetof(type, member)},
#include "ddi_header_slots.inc"
#undef ZEHAL_DDI_HEADER_SLOT
};

// A member as ddi_layouts.inc places it.
struct Listed {
    std::string_view getter;
    std::string_view function;
    uint32_t minor;
    size_t slot;
};

std::vector<Listed> listed_members() {
    std::vector<Listed> out;
    std::string_view getter;
    size_t slot = 0;
    for (const Line& l : kLayouts) {
        if (l.minor == kTable) {
            getter = l.name;
            slot = 0;
        } else {
            out.push_back({getter, l.name, l.minor, slot++});
        }
    }
    return out;
}

// The API minor version of the headers in use.
constexpr uint32_t kHeaderMinor = ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT);

TEST(DdiLayouts, EveryMemberTheHeadersDeclareSitsAtItsListedSlot) {
    std::map<std::pair<std::string_view, std::string_view>, size_t> offset_of;
    std::set<std::string_view> header_tables;
    for (const HeaderSlot& s : kHeaderSlots) {
        offset_of[{s.getter, s.function}] = s.offset;
        header_tables.insert(s.getter);
    }
    ASSERT_FALSE(offset_of.empty()) << "no dispatch table found in the headers";

    size_t checked = 0, newer = 0;
    for (const Listed& m : listed_members()) {
        const auto it = offset_of.find({m.getter, m.function});
        if (it == offset_of.end()) {
            // Only a member the headers are too old to know may be missing from them: one of
            // a table they lack (the specification dates some experimental tables' members
            // 1.0 although the tables came later), or one of a later version.
            EXPECT_TRUE(!header_tables.count(m.getter) || m.minor > kHeaderMinor)
                << m.getter << ": " << m.function << " (1." << m.minor << ") is not in that table of the headers";
            ++newer;
            continue;
        }
        EXPECT_EQ(it->second, m.slot * sizeof(void*))
            << m.getter << ": " << m.function << " is listed at slot " << m.slot << ", the headers put it at slot "
            << it->second / sizeof(void*);
        ++checked;
    }
    EXPECT_GT(checked, 0u);
    std::printf("ddi_layouts.inc: %zu members checked against API 1.%u headers, %zu newer than them\n", checked,
                kHeaderMinor, newer);
}

TEST(DdiLayouts, EveryMemberIsListedOnceAndTablesOnce) {
    std::map<std::string_view, int> seen;
    for (const Line& l : kLayouts) EXPECT_EQ(++seen[l.name], 1) << l.name << " is listed more than once";
}

}  // namespace
