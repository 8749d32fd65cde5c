// The compiler's benchmarks: SPIR-V kernels run by HostModule (all cores, the compiler's
// pool) beside the same loops compiled by the host compiler and run on as many threads (a
// kernel with barriers, the tiled matrix multiplication, beside the plain triple loop);
// and module creation cold, from the disk cache and from the memory cache.
//   compiler_bench [--quick]   (reads the SPIR-V of <build>/kernels)
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "compiler/module_cache.hpp"
#include "compiler/program.hpp"

namespace {

using zehal::compiler::HostModule;
using zehal::compiler::LaunchArgs;
using zehal::compiler::LaunchGrid;
using zehal::compiler::Program;
using Clock = std::chrono::steady_clock;

std::vector<uint8_t> spirv(const char* name) {
    std::ifstream file(std::string(ZEHAL_SPIRV_KERNEL_DIR) + "/" + name + ".spv", std::ios::binary);
    return {std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
}

// Best of `reps` timings of `f`, in seconds.
double best_of(int reps, const std::function<void()>& f) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
        const auto start = Clock::now();
        f();
        best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    }
    return best;
}

// Runs body(begin, end) over [0, n) split across `threads` threads.
void parallel_for(size_t n, unsigned threads, const std::function<void(size_t, size_t)>& body) {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
    }
    for (auto& thread : pool) {
        thread.join();
    }
}

__attribute__((noinline)) void native_saxpy(float* y, const float* x, float a, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
        y[i] = a * x[i] + y[i];
    }
}

__attribute__((noinline)) void native_polynomial(float* y, float a, float b, uint32_t steps, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
        float v = y[i];
        for (uint32_t s = 0; s < steps; ++s) {
            v = v * a + b;
        }
        y[i] = v;
    }
}

// C = A * B (row-major, m x k times k x n) for the rows [begin, end), each element the
// dot product the tiled kernel computes for its work-item.
__attribute__((noinline)) void native_matrix_multiply(const float* a, const float* b, float* c, size_t k, size_t n,
                                                      size_t begin, size_t end) {
    for (size_t row = begin; row < end; ++row) {
        for (size_t col = 0; col < n; ++col) {
            float sum = 0.0f;
            for (size_t i = 0; i < k; ++i) {
                sum += a[row * k + i] * b[i * n + col];
            }
            c[row * n + col] = sum;
        }
    }
}

std::shared_ptr<const HostModule> build(const char* name) {
    std::shared_ptr<const Program> program;
    std::shared_ptr<const HostModule> module;
    std::string log;
    const auto bytes = spirv(name);
    if (Program::from_spirv(bytes, "", &program, &log) != ZE_RESULT_SUCCESS ||
        HostModule::build(program, &module, &log) != ZE_RESULT_SUCCESS) {
        std::fprintf(stderr, "%s: %s\n", name, log.c_str());
        std::exit(1);
    }
    return module;
}

void row(const char* name, double value, const char* unit, double baseline, const char* baseline_name) {
    std::printf("%-34s %10.3f %-6s %-26s %10.3f  ratio %.2f\n", name, value, unit, baseline_name, baseline,
                value > 0 ? baseline / value : 0.0);
}

void kernels(bool quick) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const uint32_t group = 1024;
    const size_t n = size_t{group} * (quick ? 1024 : 16384);
    const int reps = quick ? 3 : 10;
    std::vector<float> x(n, 1.5f), y(n, 0.25f);
    auto saxpy = build("saxpy");
    float a = 1.0001f;
    const float* xp = x.data();
    float* yp = y.data();
    const uint32_t count = static_cast<uint32_t>(n);
    const void* values[] = {&yp, &xp, &a, &count};
    LaunchGrid grid;
    grid.group_count = {static_cast<uint32_t>(n / group), 1, 1};
    grid.group_size = {group, 1, 1};
    const LaunchArgs args{values, {}};
    std::string error;
    const double native = best_of(
        reps, [&] { parallel_for(n, threads, [&](size_t b, size_t e) { native_saxpy(yp, xp, a, b, e); }); });
    auto bench = build("bench");
    const double exact = best_of(reps, [&] { bench->run(1, args, grid, &error); });
    row("saxpy (SPIR-V, host JIT) ms", exact * 1e3, "ms", native * 1e3, "same loop, g++ -O2, threads");
    // With the bounds check of saxpy.cl (i < n): masked vector stores.
    const double kernel = best_of(reps, [&] { saxpy->run(0, args, grid, &error); });
    row("saxpy, bounds-checked, ms", kernel * 1e3, "ms", native * 1e3, "same loop, g++ -O2, threads");

    auto& poly = bench;
    float pa = 0.999f, pb = 0.001f;
    const uint32_t steps = 32;
    const void* poly_values[] = {&yp, &pa, &pb, &steps};
    const LaunchArgs poly_args{poly_values, {}};
    const double poly_kernel = best_of(reps, [&] { poly->run(0, poly_args, grid, &error); });
    const double poly_native = best_of(reps, [&] {
        parallel_for(n, threads, [&](size_t b, size_t e) { native_polynomial(yp, pa, pb, steps, b, e); });
    });
    row("polynomial x32 (SPIR-V) ms", poly_kernel * 1e3, "ms", poly_native * 1e3, "same loop, g++ -O2, threads");
    std::printf("(%zu elements, groups of %u, %u threads)\n", n, group, threads);
}

// The tiled multiplication (two barriers per tile: every work-item a coroutine) beside the
// plain triple loop.
void matrix_multiply(bool quick) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    const int dim = quick ? 256 : 512;
    const int reps = quick ? 2 : 3;
    const size_t count = size_t(dim) * dim;
    std::vector<float> a(count, 1.0f), b(count, 0.5f), c(count, 0.0f);
    auto module = build("matrix_multiply");
    const float* ap = a.data();
    const float* bp = b.data();
    float* cp = c.data();
    const void* values[] = {&ap, &bp, &cp, &dim, &dim, &dim};
    LaunchGrid grid;
    grid.group_count = {static_cast<uint32_t>(dim / 16), static_cast<uint32_t>(dim / 16), 1};
    grid.group_size = {16, 16, 1};
    std::string error;
    const double kernel = best_of(reps, [&] { module->run(0, LaunchArgs{values, {}}, grid, &error); });
    const double native = best_of(reps, [&] {
        parallel_for(dim, threads, [&](size_t begin, size_t end) {
            native_matrix_multiply(ap, bp, cp, size_t(dim), size_t(dim), begin, end);
        });
    });
    row("tiled matrix multiply (SPIR-V) ms", kernel * 1e3, "ms", native * 1e3, "triple loop, g++ -O2");
    std::printf("(%d x %d floats, groups of 16 x 16, %u threads)\n", dim, dim, threads);
}

// Points the kernel cache at a new folder under /tmp while it lives, and removes the folder
// when it goes: every figure is of this build's code.
class FreshCache {
public:
    FreshCache() {
        char pattern[] = "/tmp/zehal-bench-cache-XXXXXX";
        if (mkdtemp(pattern) != nullptr) {
            folder_ = pattern;
            setenv("ZEHAL_CACHE_DIR", pattern, 1);
        }
        zehal::compiler::clear_memory_cache();
    }
    ~FreshCache() {
        std::error_code ignored;
        if (!folder_.empty()) std::filesystem::remove_all(folder_, ignored);
    }
    FreshCache(const FreshCache&) = delete;
    FreshCache& operator=(const FreshCache&) = delete;

private:
    std::string folder_;
};

void module_creation() {
    const FreshCache cache;
    auto create = [] {
        const auto bytes = spirv("matrix_multiply");
        std::shared_ptr<const Program> program;
        std::shared_ptr<const HostModule> module;
        std::string log;
        Program::from_spirv(bytes, "", &program, &log);
        HostModule::build(program, &module, &log);
    };
    const double cold = best_of(1, create);
    const double disk = best_of(3, [&] {
        zehal::compiler::clear_memory_cache();
        create();
    });
    const double memory = best_of(5, create);
    row("module create, cold ms", cold * 1e3, "ms", cold * 1e3, "cold");
    row("module create, disk cache ms", disk * 1e3, "ms", cold * 1e3, "cold");
    row("module create, memory cache ms", memory * 1e3, "ms", cold * 1e3, "cold");
}

}  // namespace

int main(int argc, char** argv) {
    if (!zehal::compiler::available()) {
        std::printf("kernels unavailable: %s\n", std::string(zehal::compiler::unavailable_reason()).c_str());
        return 0;
    }
    const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
    {
        const FreshCache cache;
        kernels(quick);
        matrix_multiply(quick);
    }
    module_creation();
    return 0;
}
