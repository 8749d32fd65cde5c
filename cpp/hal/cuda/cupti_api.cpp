#include "hal/cuda/cupti_api.hpp"

#include <glob.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "common/dynlib.hpp"

namespace zehal::cuda {

namespace {

constexpr uint32_t kHeaderMajor = CUPTI_API_VERSION / 10000;

struct Loaded {
    DynLib lib;
    CuptiApi api;
    bool ok = false;
    std::string why;
    CuptiProfilerApi profiler;
    std::string profiler_why;  // empty when `profiler` is complete
};

// Paths matching a shell pattern, sorted (glob's order).
void add_glob(const std::string& pattern, std::vector<std::string>* out) {
    glob_t g{};
    if (glob(pattern.c_str(), 0, nullptr, &g) == 0) {
        for (size_t i = 0; i < g.gl_pathc; ++i) out->emplace_back(g.gl_pathv[i]);
    }
    globfree(&g);
}

std::vector<std::string> candidates() {
    std::vector<std::string> names;
    if (const char* forced = std::getenv("ZEHAL_CUPTI_LIBRARY"); forced && *forced) {
        names.emplace_back(forced);
        return names;
    }
    names.push_back("libcupti.so." + std::to_string(kHeaderMajor));
    names.emplace_back("libcupti.so");
    std::vector<std::string> roots;
    for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
        if (const char* v = std::getenv(var); v && *v) roots.emplace_back(v);
    }
    roots.emplace_back("/usr/local/cuda");
    add_glob("/usr/local/cuda-*", &roots);
    for (const std::string& root : roots) {
        for (const char* sub : {"/extras/CUPTI/lib64/libcupti.so*", "/lib64/libcupti.so*"})
            add_glob(root + sub, &names);
    }
    return names;
}

Loaded* load() {
    auto* l = new Loaded{};
    for (const std::string& name : candidates()) {
        DynLib lib = DynLib::open_first(name.c_str());
        if (!lib) continue;
        uint32_t version = 0;
        auto get_version = lib.symbol<decltype(&::cuptiGetVersion)>("cuptiGetVersion");
        if (!get_version || get_version(&version) != CUPTI_SUCCESS) continue;
        if (version / 10000 != kHeaderMajor) {
            l->why = name + " is CUPTI " + std::to_string(version) + ", this build needs major " +
                     std::to_string(kHeaderMajor);
            continue;
        }
        l->lib = std::move(lib);
        break;
    }
    if (!l->lib) {
        if (l->why.empty()) l->why = "no libcupti.so* found (set ZEHAL_CUPTI_LIBRARY to its path)";
        return l;
    }
    std::string missing;
#define ZEHAL_CUPTI_RESOLVE(name)                          \
    l->api.name = l->lib.symbol<decltype(&::name)>(#name); \
    if (!l->api.name) missing += (missing.empty() ? "" : ", ") + std::string(#name);
    ZEHAL_CUPTI_FUNCTIONS(ZEHAL_CUPTI_RESOLVE)
#undef ZEHAL_CUPTI_RESOLVE
    if (!missing.empty()) {
        l->why = "libcupti lacks " + missing;
        return l;
    }
    l->ok = true;
#define ZEHAL_CUPTI_RESOLVE(name)                               \
    l->profiler.name = l->lib.symbol<decltype(&::name)>(#name); \
    if (!l->profiler.name) l->profiler_why += (l->profiler_why.empty() ? "" : ", ") + std::string(#name);
    ZEHAL_CUPTI_PROFILER_FUNCTIONS(ZEHAL_CUPTI_RESOLVE)
#undef ZEHAL_CUPTI_RESOLVE
    if (!l->profiler_why.empty()) l->profiler_why = "libcupti lacks PM sampling (" + l->profiler_why + ")";
    return l;
}

// The library, loaded once, thread-safely, and kept for the process's life.
const Loaded& loaded() {
    // Function-local static: initialised once, on first use.
    static const Loaded* const l = load();
    return *l;
}

}  // namespace

const CuptiApi* cupti_api(std::string* why) {
    const Loaded& l = loaded();
    if (!l.ok) {
        if (why) *why = l.why;
        return nullptr;
    }
    return &l.api;
}

const CuptiProfilerApi* cupti_profiler_api(std::string* why) {
    const Loaded& l = loaded();
    if (!l.ok || !l.profiler_why.empty()) {
        if (why) *why = l.ok ? l.profiler_why : l.why;
        return nullptr;
    }
    return &l.profiler;
}

}  // namespace zehal::cuda
