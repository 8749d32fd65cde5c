#include "device_selection.hpp"

#include <charconv>
#include <cstdlib>

namespace zehal::ze_driver {
namespace {

// `text` without leading and trailing blanks.
std::string_view trimmed(std::string_view text) {
    const size_t first = text.find_first_not_of(" \t");
    if (first == std::string_view::npos) return {};
    return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

// `text` as a whole decimal number into `out`; false when it is anything else.
bool parse_number(std::string_view text, uint32_t* out) {
    if (text.empty()) return false;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
    return ec == std::errc() && end == text.data() + text.size();
}

// The device an entry "N" or "N.0" names into `out`; false for any other entry.
bool entry_device(std::string_view entry, uint32_t* out) {
    const size_t dot = entry.find('.');
    if (dot == std::string_view::npos) return parse_number(entry, out);
    uint32_t sub = 0;
    return parse_number(entry.substr(0, dot), out) && parse_number(entry.substr(dot + 1), &sub) && sub == 0;
}

}  // namespace

bool affinity_selects(std::string_view mask, uint32_t index) {
    if (trimmed(mask).empty()) return true;
    while (!mask.empty()) {
        const size_t comma = mask.find(',');
        uint32_t device = 0;
        if (entry_device(trimmed(mask.substr(0, comma)), &device) && device == index) return true;
        mask = comma == std::string_view::npos ? std::string_view{} : mask.substr(comma + 1);
    }
    return false;
}

std::string_view affinity_mask() {
    const char* mask = std::getenv("ZE_AFFINITY_MASK");
    return mask ? mask : "";
}

}  // namespace zehal::ze_driver
