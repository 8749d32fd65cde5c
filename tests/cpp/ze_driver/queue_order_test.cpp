// Event resets, timestamp writes and kernel timestamp queries run in queue order: no
// append, execution, reset or destroy waits for the device. Each scenario
// (queue_order_scenarios.cpp) runs in a child process with a time limit, so one that hangs
// fails here instead of hanging the suite.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

extern char** environ;

namespace {

// Far above what any scenario needs; a scenario still running then is taken as hung.
constexpr auto kLimit = std::chrono::seconds(60);

// Runs scenario `name` in a child; "" when it exited with status 0, else what went wrong.
std::string run_scenario(const std::string& name) {
    std::string program = ZEHAL_QUEUE_ORDER_SCENARIOS;
    char* argv[] = {program.data(), const_cast<char*>(name.c_str()), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, environ) != 0) return "cannot start " + program;
    const auto deadline = std::chrono::steady_clock::now() + kLimit;
    int status = 0;
    for (;;) {
        const pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid) break;
        if (done < 0) return "waitpid failed";
        if (std::chrono::steady_clock::now() > deadline) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return "hung (killed after the time limit)";
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
    if (WIFSIGNALED(status)) return "killed by signal " + std::to_string(WTERMSIG(status));
    return "exited with status " + std::to_string(WEXITSTATUS(status)) + " (its stderr says which check)";
}

TEST(QueueOrder, ImmediateListCommandsBehindAHostSignalledWaitReturnAtOnce) {
    EXPECT_EQ(run_scenario("immediate_behind_host_wait"), "");
}

TEST(QueueOrder, RegularListCommandsBehindAHostSignalledWaitExecuteAtOnce) {
    EXPECT_EQ(run_scenario("regular_behind_host_wait"), "");
}

TEST(QueueOrder, AQueuedResetComesBeforeALaterWaitOnTheSameEvent) {
    EXPECT_EQ(run_scenario("reset_then_wait_on_same_event"), "");
}

TEST(QueueOrder, DestroyAndResetWithPendingWaitsReturnAndTheWorkStillRuns) {
    EXPECT_EQ(run_scenario("destroy_with_pending_wait"), "");
}

}  // namespace
