#include "dispatch.hpp"

#include <string>
#include <unordered_map>

namespace zehal::ze_driver {
namespace {

// One line of ddi_layouts.inc: a table's getter (minor kTable) or one of its members.
struct Member {
    std::string_view name;
    uint32_t minor;
};
constexpr uint32_t kTable = ~0u;

constexpr Member kLayouts[] = {
#define ZEHAL_DDI_TABLE(getter) {#getter, kTable},
#define ZEHAL_DDI_MEMBER(function, minor) {#function, minor},
#define ZEHAL_DDI_TABLE_END()
#include "ddi_layouts.inc"
#undef ZEHAL_DDI_TABLE
#undef ZEHAL_DDI_MEMBER
#undef ZEHAL_DDI_TABLE_END
};

// Every member the driver does not implement points here. A dispatch-table member is
// always called through the platform's C calling convention, where the caller owns its
// arguments, so one function that reads none of them serves every signature.
extern "C" ze_result_t zehal_ze_unsupported() {
    record_error("a function the driver does not implement", ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

const std::unordered_map<std::string_view, void (*)()>& implemented() {
    static const auto* map = [] {
        auto* m = new std::unordered_map<std::string_view, void (*)()>;
        for (auto family : {driver_entries(),           memory_entries(),           event_entries(),
                            command_entries(),          metric_entries(),           last_error_entries(),
                            region_copy_entries(),      immediate_append_entries(), device_kernel_limits_entries(),
                            metric_group_exp_entries(), memory_hints_entries(),     module_entries(),
                            kernel_entries(),           launch_entries(),           virtual_memory_entries(),
                            metric_streamer_entries(),  metric_query_entries(),     metric_calculate_entries(),
                            ipc_memory_entries(),       ipc_event_pool_entries(),   system_barrier_entries(),
                            object_query_entries()})
            for (const Entry& e : family) m->emplace(e.name, e.address);
        return m;
    }();
    return *map;
}

}  // namespace

void (*find_entry(std::string_view name))() {
    const auto& map = implemented();
    auto it = map.find(name);
    return it == map.end() ? nullptr : it->second;
}

ze_result_t fill_table(std::string_view getter, ze_api_version_t version, void* table) noexcept {
    if (!table) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(version) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    const uint32_t minor = ZE_MINOR_VERSION(version);
    const Member* it = std::begin(kLayouts);
    while (it != std::end(kLayouts) && !(it->minor == kTable && it->name == getter)) ++it;
    if (it == std::end(kLayouts)) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    auto* slots = static_cast<void (**)()>(table);
    size_t slot = 0;
    for (++it; it != std::end(kLayouts) && it->minor != kTable; ++it, ++slot) {
        if (it->minor > minor) continue;  // a later member: not in this loader's table
        void (*impl)() = find_entry(it->name);
        slots[slot] = impl ? impl : reinterpret_cast<void (*)()>(&zehal_ze_unsupported);
    }
    return ZE_RESULT_SUCCESS;
}

}  // namespace zehal::ze_driver
