// IPC event pools of the host event domain: a pool made with kPoolIpc on a device with a
// linear clock lives in a file that open_ipc_event_pool maps, whose events are the same
// events, timestamps and loss included; a waiter of another process is woken by a signal.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>

#include "common/clock.hpp"
#include "hal/host_event.hpp"
#include "hal/import_fd.hpp"

namespace zehal::hal {
namespace {

// A domain with a 19.2 MHz linear clock of 32 kernel timestamp bits and two packets a command.
std::shared_ptr<EventDomain> clocked_domain(bool linear = true) {
    EventDomain::Params p;
    p.timer_hz = 19'200'000;
    p.kernel_timestamp_valid_bits = 32;
    p.timestamp_flags = kTimestampKernel | kTimestampSynchronized;
    p.max_packets = 2;
    const LinearClock clock{p.timer_hz, 1000, host_now_ns()};
    if (linear) p.linear_clock = clock;
    const uint64_t mask = timestamp_max(p.kernel_timestamp_valid_bits);
    return std::make_shared<EventDomain>(
        p,
        [clock, mask] {
            const uint64_t host = host_now_ns();
            return TimestampReference{host, clock.ticks_at(host) & mask};
        },
        [clock](uint64_t host_ns) { return clock.ticks_at(host_ns); });
}

std::shared_ptr<EventPool> make_pool(EventDomain& domain, uint32_t count, uint32_t flags) {
    std::shared_ptr<EventPool> p;
    EXPECT_EQ(domain.create_pool(count, flags, &p), ZE_RESULT_SUCCESS);
    return p;
}

EventRef event_of(const std::shared_ptr<EventPool>& p, uint32_t i) {
    EventRef e;
    EXPECT_EQ(p->event(i, &e), ZE_RESULT_SUCCESS);
    return e;
}

// The pool opened from `exported`'s file.
std::shared_ptr<EventPool> open_copy(const std::shared_ptr<EventPool>& exported) {
    int fd = -1;
    uint64_t bytes = 0;
    EXPECT_EQ(exported->ipc_file(&fd, &bytes), ZE_RESULT_SUCCESS);
    std::shared_ptr<EventPool> opened;
    EXPECT_EQ(open_ipc_event_pool(fd, &opened), ZE_RESULT_SUCCESS);
    return opened;
}

constexpr uint32_t kTimestampFlags = kPoolIpc | kPoolHostVisible | kPoolKernelMappedTimestamp;

TEST(IpcEventPool, OnlyIpcPoolsOfAClockedDomainHaveAFile) {
    auto domain = clocked_domain();
    int fd = -1;
    uint64_t bytes = 0;
    EXPECT_EQ(make_pool(*domain, 2, kPoolHostVisible)->ipc_file(&fd, &bytes), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
    auto shared = make_pool(*domain, 2, kPoolIpc);
    EXPECT_EQ(shared->ipc_file(nullptr, &bytes), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    ASSERT_EQ(shared->ipc_file(&fd, &bytes), ZE_RESULT_SUCCESS);
    EXPECT_GE(fd, 0);
    uint64_t file_bytes = 0;
    EXPECT_EQ(check_import_fd(fd, &file_bytes), ZE_RESULT_SUCCESS);  // a sealed memfd
    EXPECT_EQ(file_bytes, bytes);
    // A domain whose clock is not known keeps its IPC pools to itself.
    auto unclocked = clocked_domain(false);
    EXPECT_EQ(make_pool(*unclocked, 2, kPoolIpc)->ipc_file(&fd, &bytes), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);
}

// The opened pool's events are the exporter's: signals, resets and timestamps, both ways.
TEST(IpcEventPool, OpenedEventsAreTheSameEvents) {
    auto domain = clocked_domain();
    auto pool = make_pool(*domain, 3, kTimestampFlags);
    auto opened = open_copy(pool);
    ASSERT_NE(opened, nullptr);
    EXPECT_EQ(opened->count(), 3u);
    EXPECT_EQ(opened->flags(), kTimestampFlags);
    int fd = -1;
    uint64_t bytes = 0;
    EXPECT_EQ(opened->ipc_file(&fd, &bytes), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE);  // not its file to hand out
    EventRef mine = event_of(pool, 1);
    EventRef theirs = event_of(opened, 1);
    EXPECT_EQ(theirs->query(), ZE_RESULT_NOT_READY);
    const KernelTimestampResult packets[2] = {{10, 20, 11, 19}, {12, 30, 13, 29}};
    static_cast<HostEvent*>(mine.get())->signal_from_device(packets, {5000, 7});
    EXPECT_EQ(theirs->host_synchronize(kWaitForever), ZE_RESULT_SUCCESS);
    EXPECT_EQ(event_of(opened, 0)->query(), ZE_RESULT_NOT_READY);
    KernelTimestampResult a[2]{}, b[2]{};
    uint32_t n = 2;
    ASSERT_EQ(theirs->query_kernel_timestamps(&n, a), ZE_RESULT_SUCCESS);
    ASSERT_EQ(n, 2u);
    EXPECT_EQ(std::memcmp(a, packets, sizeof a), 0);
    n = 2;
    ASSERT_EQ(mine->query_synchronized_timestamps(&n, a), ZE_RESULT_SUCCESS);
    n = 2;
    ASSERT_EQ(theirs->query_synchronized_timestamps(&n, b), ZE_RESULT_SUCCESS);
    EXPECT_EQ(std::memcmp(a, b, sizeof a), 0);  // the same device facts on both sides
    EXPECT_EQ(theirs->host_reset(), ZE_RESULT_SUCCESS);
    EXPECT_EQ(mine->query(), ZE_RESULT_NOT_READY);
    // A host signal of the opened event stamps it with the exporter's clock.
    const uint64_t before = domain->ticks_at(host_now_ns());
    EXPECT_EQ(theirs->host_signal(), ZE_RESULT_SUCCESS);
    const uint64_t after = domain->ticks_at(host_now_ns());
    n = 1;
    ASSERT_EQ(mine->query_kernel_timestamps(&n, a), ZE_RESULT_SUCCESS);
    EXPECT_LE(before, a[0].global_start);
    EXPECT_LE(a[0].global_start, after);
    // The opened events' domain reads the exporter's device ticks.
    auto* opened_event = static_cast<HostEvent*>(theirs.get());
    EXPECT_TRUE(opened_event->shared());
    EXPECT_TRUE(opened_event->domain().has_clock());
    EXPECT_EQ(opened_event->domain().ticks_at(before), domain->ticks_at(before));
    EXPECT_FALSE(static_cast<HostEvent*>(event_of(make_pool(*domain, 1, 0), 0).get())->shared());
}

// The exporter's device lost: the opened events answer DEVICE_LOST and their waiters wake.
TEST(IpcEventPool, ExportersLossReachesTheOpenedEvents) {
    auto domain = clocked_domain();
    auto pool = make_pool(*domain, 1, kPoolIpc);
    EventRef theirs = event_of(open_copy(pool), 0);
    ze_result_t waited = ZE_RESULT_SUCCESS;
    std::thread waiter([&] { waited = theirs->host_synchronize(kWaitForever); });
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_TRUE(domain->lose());
    waiter.join();
    EXPECT_EQ(waited, ZE_RESULT_ERROR_DEVICE_LOST);
    EXPECT_EQ(theirs->query(), ZE_RESULT_ERROR_DEVICE_LOST);
}

// What is no IPC pool file does not open.
TEST(IpcEventPool, OtherFilesDoNotOpen) {
    std::shared_ptr<EventPool> out;
    EXPECT_EQ(open_ipc_event_pool(-1, nullptr), ZE_RESULT_ERROR_INVALID_NULL_POINTER);
    EXPECT_EQ(open_ipc_event_pool(-1, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    int pipe_fds[2];
    ASSERT_EQ(pipe(pipe_fds), 0);
    EXPECT_EQ(open_ipc_event_pool(pipe_fds[0], &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    // A sealed memfd of the right size whose header is garbage.
    auto domain = clocked_domain();
    auto pool = make_pool(*domain, 4, kTimestampFlags);
    int fd = -1;
    uint64_t bytes = 0;
    ASSERT_EQ(pool->ipc_file(&fd, &bytes), ZE_RESULT_SUCCESS);
    const int junk = memfd_create("junk", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    ASSERT_GE(junk, 0);
    ASSERT_EQ(ftruncate(junk, static_cast<off_t>(bytes)), 0);
    ASSERT_TRUE(seal_against_shrinking(junk));
    EXPECT_EQ(open_ipc_event_pool(junk, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    // The pool's own header in a file of another size.
    std::vector<unsigned char> header(kIpcPoolHeaderBytes);
    ASSERT_EQ(pread(fd, header.data(), header.size(), 0), static_cast<ssize_t>(header.size()));
    ASSERT_EQ(pwrite(junk, header.data(), header.size(), 0), static_cast<ssize_t>(header.size()));
    ASSERT_EQ(ftruncate(junk, static_cast<off_t>(bytes + 4096)), 0);
    EXPECT_EQ(open_ipc_event_pool(junk, &out), ZE_RESULT_ERROR_INVALID_ARGUMENT);
    close(junk);
    EXPECT_EQ(out, nullptr);
}

// A process sleeping on an event is woken by another process's signal: the slot's futex is
// one of the file's pages, not of one process. The child waits with no time limit; the test
// gives it a minute.
TEST(IpcEventPool, SignalWakesAWaiterOfAnotherProcess) {
    auto domain = clocked_domain();
    auto pool = make_pool(*domain, 1, kPoolIpc);
    EventRef e = event_of(pool, 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The pool's slots are a shared mapping: the same pages in this child.
        _exit(e->host_synchronize(kWaitForever) == ZE_RESULT_SUCCESS ? 0 : 1);
    }
    // Lets the child fall asleep first (a wake it misses would leave it asleep).
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(e->host_signal(), ZE_RESULT_SUCCESS);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    pid_t done = 0;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (done == 0) {
        kill(child, SIGKILL);
        waitpid(child, &status, 0);
        FAIL() << "the other process's waiter was never woken";
    }
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
}  // namespace zehal::hal
