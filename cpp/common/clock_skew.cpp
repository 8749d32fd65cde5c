#include "common/clock_skew.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>

namespace zehal {
namespace {

// The rank an MPI launcher gave this process; 0 without one.
unsigned long launcher_rank() {
    for (const char* var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"})
        if (const char* text = std::getenv(var); text && *text) return std::strtoul(text, nullptr, 10);
    return 0;
}

}  // namespace

ClockSkew test_clock_skew() {
    const char* text = std::getenv("ZEHAL_TEST_CLOCK_SKEW");
    if (!text || !*text) return {};
    const std::string all(text);
    size_t begin = 0;
    for (unsigned long k = launcher_rank(); k > 0; --k) {
        begin = all.find(',', begin);
        if (begin == std::string::npos) return {};
        ++begin;
    }
    const std::string entry = all.substr(begin, all.find(',', begin) - begin);
    const size_t colon = entry.find(':');
    if (colon == std::string::npos) return {};
    const std::string offset = entry.substr(0, colon), drift = entry.substr(colon + 1);
    char* end = nullptr;
    errno = 0;
    const long long offset_ns = std::strtoll(offset.c_str(), &end, 10);
    if (errno || end == offset.c_str() || *end) return {};
    const double drift_ppm = std::strtod(drift.c_str(), &end);
    if (errno || end == drift.c_str() || *end || !std::isfinite(drift_ppm)) return {};
    return {offset_ns, static_cast<int64_t>(std::llround(drift_ppm * 1000))};
}

}  // namespace zehal
