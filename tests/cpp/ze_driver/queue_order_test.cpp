// Event resets, timestamp writes and kernel timestamp queries run in queue order: no
// append, execution, reset or destroy waits for the device. Each scenario
// (queue_order_scenarios.cpp) runs in a child process with a time limit, so one that hangs
// fails here instead of hanging the suite.
#include <gtest/gtest.h>

#include <spawn.h>
#include <unistd.h>

#include <string>

#include "../support/child_exit.hpp"

extern char** environ;

namespace {

// Runs scenario `name` in a child; "" when it exited with status 0, else what went wrong.
std::string run_scenario(const std::string& name) {
    std::string program = ZEHAL_QUEUE_ORDER_SCENARIOS;
    char* argv[] = {program.data(), const_cast<char*>(name.c_str()), nullptr};
    pid_t pid = 0;
    if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, environ) != 0) return "cannot start " + program;
    const std::string why = zehal::test::wait_for_child(pid);
    // A scenario's stderr says which of its checks failed.
    return why.empty() || why.rfind("exited", 0) != 0 ? why : why + " (its stderr says which check)";
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

TEST(QueueOrder, ADeferredFreeReturnsAtOnceAndFreesOnceItsCommandsAreOver) {
    EXPECT_EQ(run_scenario("deferred_free_behind_host_wait"), "");
}

}  // namespace
