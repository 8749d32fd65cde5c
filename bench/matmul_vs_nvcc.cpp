// A tiled matrix multiplication from SPIR-V on a CUDA device (zehal's compiler: SPIR-V →
// PTX) beside the same algorithm written in CUDA C and compiled by nvcc
// (bench/kernels/tiled_matmul.cu, loaded as a native PTX module), both launched through the
// HAL on one queue, in interleaved rounds, best of each; the two results are compared.
//   matmul_bench <matrix_multiplication.spv> [--n N] [--quick]
// The SPIR-V is level-zero-tests' `matrix_multiplication` kernel (its metric tests' module:
// arguments a, b, m, k, n, c; a required 16 x 16 group).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include "hal/registry.hpp"
#include "paired_rounds.hpp"

namespace {

namespace hal = zehal::hal;
constexpr uint64_t kForever = std::numeric_limits<uint64_t>::max();
constexpr uint32_t kTile = 16;

// Exits with `what` when a HAL call fails.
void check(ze_result_t r, const char* what) {
    if (r == ZE_RESULT_SUCCESS) return;
    std::fprintf(stderr, "%s failed: 0x%x\n", what, unsigned(r));
    std::exit(1);
}

std::vector<uint8_t> read_file(const std::string& path) {
    std::ifstream file(path, std::ios::binary);
    std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
    if (bytes.empty()) {
        std::fprintf(stderr, "%s is missing or empty\n", path.c_str());
        std::exit(1);
    }
    return bytes;
}

// One kernel of `module`, its arguments set for an n x n product of a and b into c.
std::shared_ptr<hal::Kernel> matmul_kernel(hal::Module& module, const char* name, void* a, void* b, void* c,
                                           int32_t n) {
    std::shared_ptr<hal::Kernel> kernel;
    check(module.create_kernel(name, &kernel), name);
    check(kernel->set_group_size(kTile, kTile, 1), "set_group_size");
    check(kernel->set_argument(0, sizeof a, &a), "argument a");
    check(kernel->set_argument(1, sizeof b, &b), "argument b");
    for (uint32_t i = 2; i < 5; ++i) check(kernel->set_argument(i, sizeof n, &n), "argument m, k or n");
    check(kernel->set_argument(5, sizeof c, &c), "argument c");
    return kernel;
}

// The n x n result at `c` read back into host memory.
std::vector<float> read_back(hal::Device& device, hal::Queue& queue, const void* c, size_t bytes) {
    void* host = nullptr;
    check(device.allocate(hal::MemoryKind::host, bytes, 64, 0, 0, &host), "allocate host");
    check(queue.append_copy(host, c, bytes, nullptr, {}), "copy back");
    check(queue.host_synchronize(kForever), "host_synchronize");
    std::vector<float> out(bytes / sizeof(float));
    std::memcpy(out.data(), host, bytes);
    check(device.free(host), "free host");
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string spirv_path;
    int32_t n = 2048;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            quick = true;
        else if (std::strcmp(argv[i], "--n") == 0 && i + 1 < argc)
            n = std::atoi(argv[++i]);
        else
            spirv_path = argv[i];
    }
    if (spirv_path.empty() || n <= 0 || n % kTile != 0) {
        std::fprintf(stderr, "usage: matmul_bench <matrix_multiplication.spv> [--n N, a multiple of 16] [--quick]\n");
        return 2;
    }
    const std::vector<uint8_t> spirv = read_file(spirv_path);
    const std::vector<uint8_t> ptx = read_file(ZEHAL_NVCC_MATMUL_PTX);

    std::shared_ptr<hal::Backend> backend;
    check(hal::find_backend("cuda", &backend), "find_backend cuda");
    if (backend->devices().empty()) check(ZE_RESULT_ERROR_UNINITIALIZED, "a CUDA device");
    hal::Device& device = *backend->devices().front();
    std::shared_ptr<hal::Queue> queue;
    check(device.create_queue(hal::kComputeOrdinal, 0, &queue), "create_queue");

    // Operands: a and b filled with small integers (exact sums), c once per kernel.
    const size_t count = size_t(n) * size_t(n);
    const size_t bytes = count * sizeof(float);
    void* host = nullptr;
    check(device.allocate(hal::MemoryKind::host, bytes, 64, 0, 0, &host), "allocate host");
    void* mem[4] = {};
    for (void*& p : mem) check(device.allocate(hal::MemoryKind::device, bytes, 256, 0, 0, &p), "allocate device");
    auto* values = static_cast<float*>(host);
    for (int operand = 0; operand < 2; ++operand) {
        for (size_t i = 0; i < count; ++i) values[i] = float((i * (operand ? 7 : 3) + operand) % 5);
        check(queue->append_copy(mem[operand], host, bytes, nullptr, {}), "copy in");
        check(queue->host_synchronize(kForever), "host_synchronize");
    }
    check(device.free(host), "free host");

    std::shared_ptr<hal::Module> from_spirv, from_nvcc;
    std::string log;
    check(device.create_module(hal::ModuleFormat::spirv, spirv, "", &from_spirv, &log), log.c_str());
    check(device.create_module(hal::ModuleFormat::native, ptx, "", &from_nvcc, &log), log.c_str());
    auto spirv_kernel = matmul_kernel(*from_spirv, "matrix_multiplication", mem[0], mem[1], mem[2], n);
    auto nvcc_kernel = matmul_kernel(*from_nvcc, "tiled_matmul", mem[0], mem[1], mem[3], n);
    const hal::GroupCount groups{uint32_t(n) / kTile, uint32_t(n) / kTile, 1};
    auto run = [&](hal::Kernel& kernel) {
        check(queue->append_launch(kernel, groups, nullptr, {}), "append_launch");
        check(queue->host_synchronize(kForever), "host_synchronize");
    };

    const int rounds = quick ? 2 : 6;
    const int iters = quick ? 2 : 10;
    const auto t = zehal::bench::paired_rounds([&] { run(*spirv_kernel); }, [&] { run(*nvcc_kernel); }, rounds, iters);
    const std::vector<float> c_spirv = read_back(device, *queue, mem[2], bytes);
    const std::vector<float> c_nvcc = read_back(device, *queue, mem[3], bytes);
    const bool same = c_spirv == c_nvcc;
    for (void* p : mem) check(device.free(p), "free device");

    const double flops = 2.0 * double(n) * double(n) * double(n);
    std::printf("device: %s, n = %d\n", device.properties().name.c_str(), n);
    std::printf("%-36s %14s %14s %8s\n", "figure", "SPIR-V", "nvcc", "ratio");
    std::printf("%-36s %9.1f GFLOP/s %9.1f GFLOP/s %8.3f\n", "tiled matmul, launch + host wait", flops / t.a / 1e9,
                flops / t.b / 1e9, t.b / t.a);
    std::printf("ratio: SPIR-V throughput / nvcc throughput (at least 0.9 is the goal); results %s\n",
                same ? "identical" : "DIFFER");
    return same ? 0 : 1;
}
