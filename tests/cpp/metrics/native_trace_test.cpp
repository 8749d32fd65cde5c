// The trace of a process without Python's: started from ZEHAL_TRACE_OUTPUT, it records the C
// API's calls into the rank's file and finishes the file at exit. Each scenario runs in a
// child process (the trace is once per process, and ends at its exit), with a deadline.
#include "metrics/native_trace.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>

#include "aml.h"
#include "aml/area/ze.h"
#include "aml/dma/ze.h"
#include "hal/registry.hpp"
#include "metrics/metric_group.hpp"
#include "metrics/tracer.hpp"
#include "zehal/device.h"
#include "zehal/events.h"
#include "support/temp_folder.hpp"

namespace zehal::metrics {
namespace {

namespace fs = std::filesystem;

// Forks; the child runs body() and exits through exit() (so that exit handlers run) with its
// status. The child's exit status, or -1 when it did not exit within a minute.
template <typename Body>
int exit_status_of_child(const Body& body) {
    const pid_t child = fork();
    if (child == 0) std::exit(body());
    if (child < 0) return -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    int status = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            return -1;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void clear_launcher_variables() {
    for (const char* var : {"_ZEHAL_TRACE_ACTIVE_PID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID",
                            "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS", "ZEHAL_TEST_CLOCK_SKEW"})
        unsetenv(var);
}

TEST(NativeTrace, RecordsTheCApiCallsAndFinishesTheFileAtExit) {
    const test::TempFolder tmp{"zehal-native-trace"};
    const fs::path output = tmp.path() / "run.pftrace";
    const int status = exit_status_of_child([&] {
        clear_launcher_variables();
        setenv("ZEHAL_TRACE_OUTPUT", output.c_str(), 1);
        setenv("ZEHAL_TRACE_RUN", "0123456789abcdef", 1);
        if (!start_native_trace()) return 2;
        if (start_native_trace()) return 3;  // once per process
        zehal_device_t device = nullptr;
        if (zehal_device_get("sim", 0, &device) != ZE_RESULT_SUCCESS) return 4;
        uint64_t host = 0, ticks = 0;
        if (zehal_device_get_global_timestamps(device, &host, &ticks) != ZE_RESULT_SUCCESS) return 5;
        return 0;
    });
    ASSERT_EQ(status, 0);
    const std::string data = read_file(tmp.path() / "run.pftrace.ranks" / "rank-00000.pftrace");
    for (const char* expected :
         {"zehal.run=0123456789abcdef", "zehal.rank=0", "zehal.size=1", "zehal.clock_sync", "zehal_device_get",
          "zehal_device_get_global_timestamps", "host API calls", "zehal.end"})
        EXPECT_NE(data.find(expected), std::string::npos) << expected;
    // The end marker comes last: the file was finished at exit.
    EXPECT_GT(data.rfind("zehal.end"), data.rfind("zehal_device_get_global_timestamps"));
}

TEST(NativeTrace, StreamsTheRecordsOfDevicesProbedAfterItStarted) {
    const test::TempFolder tmp{"zehal-native-trace"};
    const fs::path output = tmp.path() / "run.pftrace";
    const int status = exit_status_of_child([&] {
        clear_launcher_variables();
        setenv("ZEHAL_TRACE_OUTPUT", output.c_str(), 1);
        if (!start_native_trace()) return 2;
        zehal_device_t device = nullptr;
        if (zehal_device_get("sim", 0, &device) != ZE_RESULT_SUCCESS) return 3;
        struct aml_area *host = nullptr, *memory = nullptr;
        struct aml_dma* dma = nullptr;
        if (aml_area_ze_host_create(&host, 0, 64) != AML_SUCCESS) return 4;
        if (aml_area_ze_device_create(&memory, device, 0, 0, 64, AML_AREA_ZE_MMAP_DEVICE_FLAGS) != AML_SUCCESS)
            return 5;
        if (aml_dma_ze_create(&dma, device, 1, 0) != AML_SUCCESS) return 6;
        void* src = aml_area_mmap(host, 4096, nullptr);
        void* dst = aml_area_mmap(memory, 4096, nullptr);
        if (!src || !dst) return 7;
        const int copied = aml_dma_copy_custom(dma, static_cast<aml_layout*>(dst), static_cast<aml_layout*>(src),
                                               aml_dma_ze_memcpy_op, reinterpret_cast<void*>(uintptr_t{4096}));
        aml_area_munmap(memory, dst, 4096);
        aml_area_munmap(host, src, 4096);
        aml_dma_ze_destroy(&dma);
        aml_area_ze_destroy(&memory);
        aml_area_ze_destroy(&host);
        return copied == AML_SUCCESS ? 0 : 8;
    });
    ASSERT_EQ(status, 0);
    const std::string data = read_file(tmp.path() / "run.pftrace.ranks" / "rank-00000.pftrace");
    for (const char* expected : {"sim device 0: copy engine 0", "sim device 0: queue depth copy engine 0",
                                 "sim device 0: dropped records", "BytesMoved"})
        EXPECT_NE(data.find(expected), std::string::npos) << expected;
    EXPECT_GT(data.rfind("zehal.end"), data.rfind("BytesMoved"));
}

TEST(NativeTrace, AProgramsOwnTracerTakesTheDeviceOverFromTheTrace) {
    const test::TempFolder tmp{"zehal-native-trace"};
    const fs::path output = tmp.path() / "run.pftrace";
    const int status = exit_status_of_child([&] {
        clear_launcher_variables();
        setenv("ZEHAL_TRACE_OUTPUT", output.c_str(), 1);
        if (!start_native_trace()) return 2;
        std::shared_ptr<hal::Backend> sim;
        if (hal::find_backend("sim", &sim) != ZE_RESULT_SUCCESS) return 3;
        const hal::DeviceRef& device = sim->devices().front();
        std::vector<MetricGroupRef> groups;
        if (metric_groups(device, &groups) != ZE_RESULT_SUCCESS) return 4;
        std::vector<MetricGroupRef> engine;
        for (const MetricGroupRef& g : groups)
            if (g->info().name == "EngineEvents") engine.push_back(g);
        if (engine.size() != 1 || activate(device, engine) != ZE_RESULT_SUCCESS) return 5;
        const MetricGroup* raw[] = {engine.front().get()};
        std::shared_ptr<Tracer> mine;
        if (Tracer::create(device, raw, nullptr, nullptr, &mine) != ZE_RESULT_SUCCESS) return 6;
        std::shared_ptr<Tracer> second;  // the device's one tracer is the program's now
        if (Tracer::create(device, raw, nullptr, nullptr, &second) != ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE) return 7;
        return mine->destroy() == ZE_RESULT_SUCCESS ? 0 : 8;
    });
    ASSERT_EQ(status, 0);
    const std::string data = read_file(tmp.path() / "run.pftrace.ranks" / "rank-00000.pftrace");
    EXPECT_NE(data.find("device tracer handed to the program"), std::string::npos);
    EXPECT_NE(data.find("zehal.end"), std::string::npos);
}

TEST(NativeTrace, StartsOnlyWhenAskedAndNotOverAnotherTrace) {
    const test::TempFolder tmp{"zehal-native-trace"};
    const fs::path output = tmp.path() / "run.pftrace";
    const int status = exit_status_of_child([&] {
        clear_launcher_variables();
        unsetenv("ZEHAL_TRACE_OUTPUT");
        if (start_native_trace()) return 2;
        setenv("ZEHAL_TRACE_OUTPUT", output.c_str(), 1);
        // The process is traced already (by Python's trace, which sets the same variable).
        setenv("_ZEHAL_TRACE_ACTIVE_PID", std::to_string(getpid()).c_str(), 1);
        if (start_native_trace()) return 3;
        return 0;
    });
    ASSERT_EQ(status, 0);
    EXPECT_FALSE(fs::exists(tmp.path() / "run.pftrace.ranks"));
}

TEST(NativeTrace, AFolderThatCannotBeMadeLeavesTheProcessUntraced) {
    const test::TempFolder tmp{"zehal-native-trace"};
    const int status = exit_status_of_child([&] {
        clear_launcher_variables();
        const std::string output = (tmp.path() / "no" / "such" / "run.pftrace").string();
        setenv("ZEHAL_TRACE_OUTPUT", output.c_str(), 1);
        if (start_native_trace()) return 2;
        zehal_device_t device = nullptr;
        return zehal_device_get("sim", 0, &device) == ZE_RESULT_SUCCESS ? 0 : 4;
    });
    EXPECT_EQ(status, 0);
}

}  // namespace
}  // namespace zehal::metrics
