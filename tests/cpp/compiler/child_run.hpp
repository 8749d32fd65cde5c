// Runs a scenario that could crash or hang in a child process, with a deadline.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace zehal::compiler::testing {

// What became of a child: its exit status, or the signal that ended it; -1 and 0 when it
// was killed at the deadline (`timed_out`).
struct ChildEnd {
    int exit_code = -1;
    int signal = 0;
    bool timed_out = false;
};

// Forks, runs body() in the child (its return value is the exit status), waits up to
// `limit`.
template <typename Body>
ChildEnd run_in_child(const Body& body, std::chrono::seconds limit = std::chrono::seconds(60)) {
    const pid_t child = fork();
    if (child == 0) {
        _exit(body());
    }
    ChildEnd end;
    if (child < 0) {
        return end;
    }
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int status = 0;
    while (waitpid(child, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            kill(child, SIGKILL);
            waitpid(child, &status, 0);
            end.timed_out = true;
            return end;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (WIFEXITED(status)) {
        end.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
        end.signal = WTERMSIG(status);
    }
    return end;
}

}  // namespace zehal::compiler::testing
