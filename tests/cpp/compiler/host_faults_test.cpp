// A kernel that faults ends its run with an error and the process goes on; faults outside
// kernel code keep their usual effect. Each scenario runs in a child process.
#include <gtest/gtest.h>

#include <sys/mman.h>

#include <csignal>

#include "child_run.hpp"
#include "host_launch.hpp"

namespace zehal::compiler {
namespace {

using testing::Args;
using testing::build_host;
using testing::grid_1d;
using testing::run_in_child;

// Exit codes of the child, one per step that can go wrong.
int faulting_kernels_in_child() {
    auto faults = build_host("faults");
    auto buffers = build_host("buffers");
    if (!faults.module || !buffers.module) {
        return 10;
    }
    std::string error;
    Args store;
    store.value(uint64_t{16}).value(uint32_t{1});
    if (faults.module->run(faults.index("store_at"), store.launch(), grid_1d(4, 4), &error) !=
            ZE_RESULT_ERROR_UNKNOWN ||
        error.find("SIGSEGV") == std::string::npos) {
        return 11;
    }
    std::vector<uint32_t> data(16, 0);
    Args past_end;
    past_end.value(data.data()).value(uint64_t{1} << 40);
    error.clear();
    if (faults.module->run(faults.index("store_past_end"), past_end.launch(), grid_1d(64, 8), &error) !=
            ZE_RESULT_ERROR_UNKNOWN ||
        error.empty()) {
        return 12;
    }
    // The threads that caught the faults run kernels again.
    for (int round = 0; round < 8; ++round) {
        Args fill;
        fill.value(data.data()).value(uint32_t{7});
        if (buffers.module->run(buffers.index("fill_uint"), fill.launch(), grid_1d(4, 4), &error) !=
            ZE_RESULT_SUCCESS) {
            return 13;
        }
        if (faults.module->run(faults.index("store_at"), store.launch(), grid_1d(2, 2), &error) !=
            ZE_RESULT_ERROR_UNKNOWN) {
            return 14;
        }
    }
    if (data[15] != 7) {
        return 15;
    }
    // A kernel with barriers faults with its work-items suspended; the thread runs the
    // next group's coroutines as if nothing had happened.
    Args barriers_store;
    barriers_store.value(uint64_t{16}).value(uint32_t{5});
    if (faults.module->run(faults.index("store_at_after_barriers"), barriers_store.launch(), grid_1d(3, 64), &error) !=
            ZE_RESULT_ERROR_UNKNOWN ||
        error.find("SIGSEGV") == std::string::npos) {
        return 16;
    }
    Args barriers_valid;
    barriers_valid.value(reinterpret_cast<uint64_t>(&data[3])).value(uint32_t{5});
    if (faults.module->run(faults.index("store_at_after_barriers"), barriers_valid.launch(), grid_1d(1, 64), &error) !=
        ZE_RESULT_SUCCESS) {
        return 17;
    }
    return data[3] == 5 ? 0 : 18;
}

TEST(HostFaults, FaultingKernelFailsItsRunAndTheProcessGoesOn) {
    ZEHAL_REQUIRE_COMPILER();
    const auto end = run_in_child(faulting_kernels_in_child);
    EXPECT_FALSE(end.timed_out);
    EXPECT_EQ(end.signal, 0);
    EXPECT_EQ(end.exit_code, 0);
}

TEST(HostFaults, FaultsOutsideKernelsKeepTheirEffect) {
    ZEHAL_REQUIRE_COMPILER();
    const auto end = run_in_child([] {
        auto faults = build_host("faults");  // the handlers are installed by now
        Args store;
        store.value(uint64_t{16}).value(uint32_t{1});
        std::string error;
        if (faults.module->run(faults.index("store_at"), store.launch(), grid_1d(1, 1), &error) !=
            ZE_RESULT_ERROR_UNKNOWN) {
            return 1;
        }
        // A page with no access, not a null pointer: UBSan reports a store through null
        // itself, where the test wants the fault.
        void* page = mmap(nullptr, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page == MAP_FAILED) {
            return 3;
        }
        *static_cast<volatile int*>(page) = 1;
        return 2;
    });
    EXPECT_FALSE(end.timed_out);
#if defined(__SANITIZE_ADDRESS__)
    // AddressSanitizer's handler was installed first and keeps its effect: it reports the
    // fault and ends the process (abort_on_error: SIGABRT; otherwise exit code 1).
    EXPECT_TRUE(end.signal == SIGABRT || end.signal == SIGSEGV || end.exit_code == 1)
        << "signal " << end.signal << ", exit code " << end.exit_code;
#else
    EXPECT_EQ(end.signal, SIGSEGV);
#endif
}

}  // namespace
}  // namespace zehal::compiler
