// The command line of the Level Zero benchmarks: [backend] [--quick].
#pragma once

#include <cstring>
#include <string>

namespace zehal::bench {

struct BenchArgs {
    std::string backend = "sim";  // the HAL backend whose device 0 is measured
    bool quick = false;           // fewer rounds and iterations (the tests' smoke runs)
};

inline BenchArgs parse_bench_args(int argc, char** argv) {
    BenchArgs args;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--quick") == 0)
            args.quick = true;
        else
            args.backend = argv[i];
    }
    return args;
}

}  // namespace zehal::bench
