// IPC event pool handles through the driver: a pool made with ZE_EVENT_POOL_FLAG_IPC opened
// in this process and in another one (a child process, this program again), whose events are
// the same events in both: host and queue signals, host and queue waits, resets and kernel
// timestamps cross between them. Every bad input is refused. Loader 1.8 has no entry for
// zeEventPoolPutIpcHandle (API 1.6): the test asks the driver's own table for it.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../support/open_fds.hpp"
#include "driver_table.hpp"
#include "read_within.hpp"
#include "ze_fixture.hpp"

namespace zetest {
namespace {

using PutHandle = ze_result_t (*)(ze_context_handle_t, ze_ipc_event_pool_handle_t);

// The fds a child finds its pipes under, and the variable that tells it it is one.
constexpr int kChildWriteFd = 100;  // the child writes to the parent here
constexpr int kChildReadFd = 101;   // and reads from it here
constexpr const char* kChildVariable = "ZEHAL_TEST_IPC_EVENT_CHILD";
// How long either side waits for the other (a hang fails the test instead of blocking it).
constexpr uint64_t kPatienceNs = 60'000'000'000ull;
constexpr uint32_t kEvents = 5;
// ZE_EVENT_POOL_FLAG_KERNEL_MAPPED_TIMESTAMP (API 1.6, beyond loader 1.8's header): kernel and
// synchronized timestamps.
constexpr ze_event_pool_flags_t kMappedTimestamps = 1u << 3;
constexpr ze_event_pool_flags_t kSharedFlags = ZE_EVENT_POOL_FLAG_IPC | ZE_EVENT_POOL_FLAG_HOST_VISIBLE |
                                               kMappedTimestamps;

// Host ns of CLOCK_MONOTONIC_RAW, the clock synchronized timestamps are in, in every process.
uint64_t host_now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// Writes all of `size` bytes at `in` to `fd`.
bool write_all(int fd, const void* in, size_t size) { return ::write(fd, in, size) == static_cast<ssize_t>(size); }

// What the child reports after its part: the kernel and synchronized timestamps it read of
// event 1 (signalled by a command of the parent), and the host instants around its own
// command that signals event 3.
struct ChildReport {
    ze_kernel_timestamp_result_t kernel;
    ze_synchronized_timestamp_result_ext_t synchronized;
    uint64_t before_ns;
    uint64_t after_ns;
};

class IpcEventPool : public SimDriver {
protected:
    void SetUp() override {
        SimDriver::SetUp();
        if (IsSkipped()) return;
        put = driver_table_function<PutHandle>("zeGetEventPoolProcAddrTable", "zeEventPoolPutIpcHandle", 6);
        ASSERT_TRUE(put);
    }

    // A pool of `count` events with `flags`, destroyed at the end of the test.
    ze_event_pool_handle_t pool_with(ze_event_pool_flags_t flags, uint32_t count = 4) {
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, flags, count};
        ze_event_pool_handle_t pool = nullptr;
        EXPECT_EQ(zeEventPoolCreate(context, &pd, 1, &device, &pool), ZE_RESULT_SUCCESS);
        owned_pools.push_back(pool);
        return pool;
    }

    // Event `index` of `pool`, not owned by the fixture.
    static ze_event_handle_t event_of(ze_event_pool_handle_t pool, uint32_t index) {
        ze_event_desc_t ed{ZE_STRUCTURE_TYPE_EVENT_DESC, nullptr, index, 0, 0};
        ze_event_handle_t e = nullptr;
        EXPECT_EQ(zeEventCreate(pool, &ed, &e), ZE_RESULT_SUCCESS);
        return e;
    }

    // The first packet's kernel and synchronized timestamps of `e`.
    void timestamps_of(ze_event_handle_t e, ze_kernel_timestamp_result_t* kernel,
                       ze_synchronized_timestamp_result_ext_t* synchronized) {
        auto query = extension<decltype(&zeEventQueryKernelTimestampsExt)>(driver, "zeEventQueryKernelTimestampsExt");
        ASSERT_NE(query, nullptr);
        ze_event_query_kernel_timestamps_results_ext_properties_t results{
            static_cast<ze_structure_type_t>(ZEHAL_STYPE_EVENT_QUERY_KERNEL_TIMESTAMPS_RESULTS_EXT_PROPERTIES), nullptr,
            kernel, synchronized};
        uint32_t count = 1;
        ASSERT_EQ(query(e, device, &count, &results), ZE_RESULT_SUCCESS);
        ASSERT_EQ(count, 1u);
    }

    PutHandle put = nullptr;
};

TEST_F(IpcEventPool, GetIpcHandleChecksThePool) {
    ze_ipc_event_pool_handle_t ipc{};
    EXPECT_EQ(zeEventPoolGetIpcHandle(pool_with(ZE_EVENT_POOL_FLAG_HOST_VISIBLE), &ipc),
              ZE_RESULT_ERROR_INVALID_ARGUMENT);
    ze_event_pool_handle_t shared = pool_with(ZE_EVENT_POOL_FLAG_IPC | ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    EXPECT_EQ(zeEventPoolGetIpcHandle(shared, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(zeEventPoolGetIpcHandle(nullptr, &ipc), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventPoolGetIpcHandle(reinterpret_cast<ze_event_pool_handle_t>(context), &ipc),
              ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    ZE_OK(zeEventPoolGetIpcHandle(shared, &ipc));
    ze_ipc_event_pool_handle_t again{};
    ZE_OK(zeEventPoolGetIpcHandle(shared, &again));
    EXPECT_EQ(std::memcmp(ipc.data, again.data, sizeof ipc.data), 0);  // the same pool, the same handle
    EXPECT_EQ(put(context, ipc), ZE_RESULT_SUCCESS);
    ze_driver_ipc_properties_t props{ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES, nullptr, 0};
    ZE_OK(zeDriverGetIpcProperties(driver, &props));
    EXPECT_TRUE(props.flags & ZE_IPC_PROPERTY_FLAG_EVENT_POOL);
}

// A pool opened in its own process: events of the same index are the same events, whichever
// pool they were created from, from the host and from queues; each opening is a pool of its
// own, closed by zeEventPoolCloseIpcHandle.
TEST_F(IpcEventPool, OpenedPoolHasTheSameEvents) {
    ze_event_pool_handle_t pool = pool_with(kSharedFlags);
    ze_ipc_event_pool_handle_t ipc{};
    ZE_OK(zeEventPoolGetIpcHandle(pool, &ipc));
    ze_event_pool_handle_t opened = nullptr;
    ze_event_pool_handle_t opened2 = nullptr;
    ZE_OK(zeEventPoolOpenIpcHandle(context, ipc, &opened));
    ZE_OK(zeEventPoolOpenIpcHandle(context, ipc, &opened2));
    ASSERT_NE(opened, nullptr);
    EXPECT_NE(opened, opened2);
    EXPECT_NE(opened, pool);
    ze_event_handle_t mine = event_of(pool, 2);
    ze_event_handle_t theirs = event_of(opened, 2);
    ze_event_handle_t theirs2 = event_of(opened2, 2);
    ze_event_handle_t other = event_of(opened, 1);

    EXPECT_EQ(zeEventQueryStatus(theirs), ZE_RESULT_NOT_READY);
    ZE_OK(zeEventHostSignal(mine));
    EXPECT_EQ(zeEventQueryStatus(theirs), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeEventHostSynchronize(theirs2, kForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeEventQueryStatus(other), ZE_RESULT_NOT_READY);  // another index, another event
    ZE_OK(zeEventHostReset(theirs));
    EXPECT_EQ(zeEventQueryStatus(mine), ZE_RESULT_NOT_READY);

    // A queue waits for the opened event; the original's host signal releases it. The copy
    // behind the wait signals the original's event 1 (the opened pool's `other`).
    ze_event_handle_t released = event_of(pool, 1);
    ZE_OK(zeCommandListAppendMemoryCopy(list, host2, host, 64, released, 1, &theirs));
    EXPECT_EQ(zeEventQueryStatus(other), ZE_RESULT_NOT_READY);
    ZE_OK(zeEventHostSignal(mine));
    EXPECT_EQ(zeEventHostSynchronize(other, kForever), ZE_RESULT_SUCCESS);
    // Its kernel timestamps read the same through either pool.
    ze_kernel_timestamp_result_t k1{}, k2{};
    ze_synchronized_timestamp_result_ext_t s1{}, s2{};
    timestamps_of(released, &k1, &s1);
    timestamps_of(other, &k2, &s2);
    EXPECT_EQ(std::memcmp(&k1, &k2, sizeof k1), 0);
    EXPECT_EQ(std::memcmp(&s1, &s2, sizeof s1), 0);
    EXPECT_GT(k1.global.kernelEnd, k1.global.kernelStart);
    EXPECT_LE(s1.global.kernelStart, s1.global.kernelEnd);

    for (ze_event_handle_t e : {mine, theirs, theirs2, other, released}) ZE_OK(zeEventDestroy(e));
    EXPECT_EQ(zeEventPoolCloseIpcHandle(opened), ZE_RESULT_SUCCESS);
    EXPECT_EQ(zeEventPoolCloseIpcHandle(opened), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);  // closed twice
    EXPECT_EQ(zeEventPoolCloseIpcHandle(pool), ZE_RESULT_ERROR_INVALID_ARGUMENT);       // not opened here
    EXPECT_EQ(zeEventPoolCloseIpcHandle(nullptr), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventPoolCloseIpcHandle(opened2), ZE_RESULT_SUCCESS);
    EXPECT_EQ(put(context, ipc), ZE_RESULT_SUCCESS);
}

// Every bad input is refused with its error, opens nothing and leaks no fd.
TEST_F(IpcEventPool, BadInputIsRefused) {
    ze_event_pool_handle_t pool = pool_with(kSharedFlags);
    ze_ipc_event_pool_handle_t ipc{};
    ZE_OK(zeEventPoolGetIpcHandle(pool, &ipc));
    const size_t fds = zehal::test::open_fds();
    ze_event_pool_handle_t opened = nullptr;
    EXPECT_EQ(zeEventPoolOpenIpcHandle(nullptr, ipc, &opened), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, ipc, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ze_ipc_event_pool_handle_t garbage{};
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, garbage, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    std::memset(garbage.data, 0x5A, sizeof garbage.data);
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, garbage, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(put(context, garbage), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(put(nullptr, ipc), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);

    // A memory handle is no event pool handle.
    ze_ipc_mem_handle_t memory{};
    ZE_OK(zeMemGetIpcHandle(context, dev, &memory));
    ze_ipc_event_pool_handle_t as_pool{};
    std::memcpy(as_pool.data, memory.data, sizeof as_pool.data);
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, as_pool, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);

    // A handle naming another file (the memory's fd with the pool's identity) opens nothing.
    ze_ipc_event_pool_handle_t other_file = ipc;
    std::memcpy(other_file.data, memory.data, sizeof(int32_t));
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, other_file, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);

    // Another process's handle is not this process's to put.
    ze_ipc_event_pool_handle_t foreign = ipc;
    const int32_t pid = 1;
    std::memcpy(foreign.data + 8, &pid, sizeof pid);
    EXPECT_EQ(put(context, foreign), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(opened, nullptr);
    EXPECT_EQ(zehal::test::open_fds(), fds);

    // A destroyed pool's handle opens nothing, even once a new pool's file may have its fd.
    owned_pools.pop_back();
    ZE_OK(zeEventPoolDestroy(pool));
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, ipc, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    pool_with(kSharedFlags);
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, ipc, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(opened, nullptr);
}

// Opening and closing (or destroying) leaks no fd and no mapping.
TEST_F(IpcEventPool, OpenAndCloseLeakNothing) {
    ze_event_pool_handle_t pool = pool_with(kSharedFlags);
    ze_ipc_event_pool_handle_t ipc{};
    ZE_OK(zeEventPoolGetIpcHandle(pool, &ipc));
    const size_t before = zehal::test::open_fds();
    for (int i = 0; i < 64; ++i) {
        ze_event_pool_handle_t opened = nullptr;
        ZE_OK(zeEventPoolOpenIpcHandle(context, ipc, &opened));
        ze_event_handle_t e = event_of(opened, 0);
        ZE_OK(zeEventDestroy(e));
        if (i % 2) {
            ZE_OK(zeEventPoolCloseIpcHandle(opened));
        } else {
            ZE_OK(zeEventPoolDestroy(opened));
            EXPECT_EQ(zeEventPoolCloseIpcHandle(opened), ZE_RESULT_ERROR_INVALID_NULL_HANDLE);
        }
    }
    EXPECT_EQ(zehal::test::open_fds(), before);
}

// A device whose events live in no shared file (a CUDA device) shares no pool: its IPC pool's
// handle is UNSUPPORTED_FEATURE, and the pool works on as a pool of its own process.
TEST_F(IpcEventPool, DevicesWithoutSharedEventsSayWhy) {
    size_t others = 0;
    for (ze_device_handle_t d : devices) {
        if (is_sim(d)) continue;
        ++others;
        ze_event_pool_desc_t pd{ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, nullptr, kSharedFlags, 2};
        ze_event_pool_handle_t pool = nullptr;
        ZE_OK(zeEventPoolCreate(context, &pd, 1, &d, &pool));
        owned_pools.push_back(pool);
        ze_ipc_event_pool_handle_t ipc{};
        EXPECT_EQ(zeEventPoolGetIpcHandle(pool, &ipc), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
        ze_event_handle_t e = event_of(pool, 0);
        EXPECT_EQ(zeEventHostSignal(e), ZE_RESULT_SUCCESS);
        EXPECT_EQ(zeEventQueryStatus(e), ZE_RESULT_SUCCESS);
        ZE_OK(zeEventDestroy(e));
    }
    if (others == 0) GTEST_SKIP() << "no device other than the sim device (CUDA devices are checked on a GPU machine)";
}

// Starts this program again as a child running `filter`, with its pipes at kChildWriteFd and
// kChildReadFd; *to_child and *from_child are the parent's ends.
pid_t start_child(const char* filter, int* to_child, int* from_child) {
    int up[2];
    int down[2];
    if (pipe2(up, O_CLOEXEC) != 0 || pipe2(down, O_CLOEXEC) != 0) return -1;
    // The child's arguments and environment, made before the fork (the child only execs).
    std::vector<std::string> env_text{std::string(kChildVariable) + "=1"};
    for (char** e = environ; *e; ++e) env_text.emplace_back(*e);
    std::vector<char*> env;
    for (std::string& e : env_text) env.push_back(e.data());
    env.push_back(nullptr);
    std::string name = "ipc_event_child", flag = std::string("--gtest_filter=") + filter;
    char* argv[] = {name.data(), flag.data(), nullptr};
    const pid_t child = fork();
    if (child == 0) {
        // dup2 drops close-on-exec on the copies.
        if (dup2(up[1], kChildWriteFd) != kChildWriteFd || dup2(down[0], kChildReadFd) != kChildReadFd) _exit(2);
        execve("/proc/self/exe", argv, env.data());
        _exit(3);
    }
    close(up[1]);
    close(down[0]);
    *to_child = down[1];
    *from_child = up[0];
    return child;
}

// Waits a minute at most for `child` to exit (then kills it); its wait status, or -1 when
// it hung.
int reap(pid_t child) {
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    pid_t done = 0;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (done != 0) return status;
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    return -1;
}

// The parent's side of a pool shared with a child (IpcEventPoolChild.OpensTheParentsPool):
//   event 0: the parent signals it from the host, the child waits on the host;
//   event 1: a command of the parent signals it, a command of the child waits for it and
//            signals event 2, which the parent waits for on the host; both read the same
//            timestamps of event 1;
//   event 3: a command of the child signals it, a command of the parent waits for it and
//            signals event 4; its timestamps lie between the child's instants around it;
//   the child resets event 0, which the parent then finds not signalled.
TEST_F(IpcEventPool, AnotherProcessSharesTheEvents) {
    ze_event_pool_handle_t pool = pool_with(kSharedFlags, kEvents);
    std::array<ze_event_handle_t, kEvents> e{};
    for (uint32_t i = 0; i < kEvents; ++i) e[i] = event_of(pool, i);
    ze_ipc_event_pool_handle_t ipc{};
    ZE_OK(zeEventPoolGetIpcHandle(pool, &ipc));
    // A queue of its own waits for the child's event 3, so that `list` stays free.
    ze_command_list_handle_t waiter = immediate_list(0);
    ZE_OK(zeCommandListAppendBarrier(waiter, e[4], 1, &e[3]));

    int to_child = -1, from_child = -1;
    const pid_t child = start_child("IpcEventPoolChild.*", &to_child, &from_child);
    ASSERT_GT(child, 0);
    EXPECT_TRUE(write_all(to_child, ipc.data, sizeof ipc.data));
    char ready = 0;
    const bool started = read_within_a_minute(from_child, &ready, 1) && ready == 'R';
    EXPECT_TRUE(started) << "the child did not open the pool";
    ChildReport report{};
    bool reported = false;
    if (started) {
        ZE_OK(zeEventHostSignal(e[0]));
        ZE_OK(zeCommandListAppendMemoryCopy(list, host2, host, 64, e[1], 0, nullptr));
        EXPECT_EQ(zeEventHostSynchronize(e[2], kPatienceNs), ZE_RESULT_SUCCESS) << "the child's command did not run";
        EXPECT_TRUE(write_all(to_child, "A", 1));
        reported = read_within_a_minute(from_child, &report, sizeof report);
        EXPECT_TRUE(reported) << "the child sent no report";
    }
    if (reported) {
        ze_kernel_timestamp_result_t kernel{};
        ze_synchronized_timestamp_result_ext_t synchronized{};
        timestamps_of(e[1], &kernel, &synchronized);
        EXPECT_EQ(std::memcmp(&kernel, &report.kernel, sizeof kernel), 0);
        EXPECT_EQ(std::memcmp(&synchronized, &report.synchronized, sizeof synchronized), 0);
        EXPECT_EQ(zeEventQueryStatus(e[0]), ZE_RESULT_NOT_READY);  // the child reset it
        EXPECT_EQ(zeEventHostSynchronize(e[4], kPatienceNs), ZE_RESULT_SUCCESS) << "the parent's command did not run";
        timestamps_of(e[3], &kernel, &synchronized);
        EXPECT_LE(report.before_ns, synchronized.global.kernelStart);
        EXPECT_LE(synchronized.global.kernelStart, synchronized.global.kernelEnd);
        EXPECT_LE(synchronized.global.kernelEnd, report.after_ns);
    }
    EXPECT_TRUE(write_all(to_child, "B", 1));
    close(to_child);
    close(from_child);
    const int status = reap(child);
    ASSERT_NE(status, -1) << "the child hung";
    ASSERT_TRUE(WIFEXITED(status)) << status;
    EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's checks failed";
    for (ze_event_handle_t each : e) ZE_OK(zeEventDestroy(each));
    ZE_OK(zeCommandListDestroy(waiter));
}

// A handle whose exporter has exited opens nothing.
TEST_F(IpcEventPool, HandleOfAnExitedProcessDoesNotOpen) {
    int to_child = -1, from_child = -1;
    const pid_t child = start_child("IpcEventPoolExporter.*", &to_child, &from_child);
    ASSERT_GT(child, 0);
    ze_ipc_event_pool_handle_t ipc{};
    const bool received = read_within_a_minute(from_child, ipc.data, sizeof ipc.data);
    close(to_child);
    close(from_child);
    const int status = reap(child);
    ASSERT_TRUE(received) << "the child sent no handle";
    ASSERT_NE(status, -1) << "the child hung";
    ze_event_pool_handle_t opened = nullptr;
    EXPECT_EQ(zeEventPoolOpenIpcHandle(context, ipc, &opened), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(opened, nullptr);
}

class IpcEventPoolChild : public IpcEventPool {};

// The child side of IpcEventPool.AnotherProcessSharesTheEvents; skipped when run on its own.
TEST_F(IpcEventPoolChild, OpensTheParentsPool) {
    if (!std::getenv(kChildVariable)) GTEST_SKIP() << "run by IpcEventPool.AnotherProcessSharesTheEvents";
    ze_ipc_event_pool_handle_t ipc{};
    ASSERT_TRUE(read_within_a_minute(kChildReadFd, ipc.data, sizeof ipc.data));
    ze_event_pool_handle_t pool = nullptr;
    ZE_OK(zeEventPoolOpenIpcHandle(context, ipc, &pool));
    std::array<ze_event_handle_t, kEvents> e{};
    for (uint32_t i = 0; i < kEvents; ++i) e[i] = event_of(pool, i);
    // Waits for the parent's command (event 1), then signals event 2.
    ZE_OK(zeCommandListAppendBarrier(list, e[2], 1, &e[1]));
    ASSERT_TRUE(write_all(kChildWriteFd, "R", 1));
    EXPECT_EQ(zeEventHostSynchronize(e[0], kPatienceNs), ZE_RESULT_SUCCESS);
    char step = 0;
    ASSERT_TRUE(read_within_a_minute(kChildReadFd, &step, 1));
    ASSERT_EQ(step, 'A');
    ChildReport report{};
    timestamps_of(e[1], &report.kernel, &report.synchronized);
    ZE_OK(zeEventHostReset(e[0]));
    report.before_ns = host_now();
    ZE_OK(zeCommandListAppendSignalEvent(list, e[3]));
    EXPECT_EQ(zeEventHostSynchronize(e[3], kPatienceNs), ZE_RESULT_SUCCESS);
    report.after_ns = host_now();
    ASSERT_TRUE(write_all(kChildWriteFd, &report, sizeof report));
    ASSERT_TRUE(read_within_a_minute(kChildReadFd, &step, 1));
    for (ze_event_handle_t each : e) ZE_OK(zeEventDestroy(each));
    EXPECT_EQ(zeEventPoolCloseIpcHandle(pool), ZE_RESULT_SUCCESS);
}

class IpcEventPoolExporter : public IpcEventPool {};

// The child side of IpcEventPool.HandleOfAnExitedProcessDoesNotOpen: sends a handle, exits.
TEST_F(IpcEventPoolExporter, SendsAHandleAndExits) {
    if (!std::getenv(kChildVariable)) GTEST_SKIP() << "run by IpcEventPool.HandleOfAnExitedProcessDoesNotOpen";
    ze_ipc_event_pool_handle_t ipc{};
    ZE_OK(zeEventPoolGetIpcHandle(pool_with(kSharedFlags), &ipc));
    ASSERT_TRUE(write_all(kChildWriteFd, ipc.data, sizeof ipc.data));
}

}  // namespace
}  // namespace zetest
